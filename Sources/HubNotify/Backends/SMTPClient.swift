import Foundation
import HubCore
import HubSupport
import NIOCore
import NIOPosix
import NIOSSL

/// One SMTP transaction (RFC 5321) on a connection of its own: greeting, EHLO, STARTTLS (RFC 3207) or implicit TLS
/// (RFC 8314), AUTH PLAIN or LOGIN (RFC 4954), MAIL, RCPT, DATA, QUIT. Enough for a hub to hand a message to its
/// mail server; not a mail library (no pipelining, no SMTPUTF8, no DSN).
struct SMTPClient: Sendable {
    /// How the connection is protected: STARTTLS after the greeting, TLS from the first byte, or nothing.
    enum Security: String, Sendable {
        case starttls, implicit, none
    }

    struct Credentials: Sendable {
        var username: String
        var password: String
    }

    /// A recipient the server refused for good (5xx to RCPT), while it took others.
    struct Refusal: Sendable, CustomStringConvertible {
        var recipient: String
        var reply: SMTPReply
        var description: String { "<\(recipient)> (\(reply))" }
    }

    var host: String
    var port: Int
    var security: Security
    /// Whom the certificate must be signed by (`nil` with `Security.none`).
    var tls: NIOSSLContext?
    /// The name given in EHLO.
    var helo: String
    var credentials: Credentials?
    /// How long the whole attempt may take, connecting included.
    var timeout: Duration

    /// Hands one message to the server for `recipients`: the recipients it refused for good, when it took the
    /// others; an error when it took none, or not the message.
    /// - Parameter message: the message's bytes (CRLF line endings, not yet dot-stuffed), given whether the server
    ///   takes 8-bit text (8BITMIME).
    func send(
        from sender: String, to recipients: [String], message: @Sendable (_ eightBit: Bool) -> [UInt8]
    ) async throws(SMTPError) -> [Refusal] {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let timedOut = Locked(false)
        let boundary = Locked(TLSBoundary(encrypted: security == .implicit))
        let channel: NIOAsyncChannel<SMTPLine, ByteBuffer>
        do {
            let (host, security, tls) = (host, security, tls)
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(min(.seconds(10), TimeAmount(timeout)))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture(withResultOf: {
                        if security == .implicit, let tls {
                            try channel.pipeline.syncOperations.addHandler(try Self.tlsHandler(tls, host: host))
                        }
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(SMTPLineDecoder(boundary: boundary)))
                        return try NIOAsyncChannel<SMTPLine, ByteBuffer>(wrappingChannelSynchronously: channel)
                    })
                }
        } catch {
            throw .connection("cannot connect: \(error)")
        }
        // The attempt's deadline closes the connection, which ends whatever the dialogue was waiting for.
        let timer = channel.channel.eventLoop.scheduleTask(deadline: deadline) { [channel = channel.channel] in
            timedOut.withLock { $0 = true }
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var dialogue = Dialogue(
                    client: self, channel: channel.channel, boundary: boundary, lines: inbound.makeAsyncIterator(),
                    outbound: outbound)
                return try await dialogue.run(from: sender, to: recipients, message: message)
            }
        } catch {
            if timedOut.withLock({ $0 }) { throw .timedOut(timeout) }
            if let error = error as? SMTPError { throw error }
            throw .connection("\(error)")
        }
    }

    /// TLS for `host`, its certificate checked against the host name (or the IP address, which SNI can't carry).
    static func tlsHandler(_ context: NIOSSLContext, host: String) throws -> NIOSSLClientHandler {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        return try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
    }

    /// `message` with a `.` before every line that starts with one, and the end-of-data line.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(message.count + 8)
        var lineStart = true
        for byte in message {
            if lineStart && byte == UInt8(ascii: ".") { result.append(byte) }
            result.append(byte)
            lineStart = byte == UInt8(ascii: "\n")
        }
        if !lineStart { result += Array("\r\n".utf8) }
        return result + Array(".\r\n".utf8)
    }

    /// The conversation on one connection, from the greeting to QUIT.
    private struct Dialogue {
        let client: SMTPClient
        let channel: any Channel
        let boundary: Locked<TLSBoundary>
        var lines: NIOAsyncChannelInboundStream<SMTPLine>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        /// What the last EHLO advertised: its keywords, upper-cased, with their parameters.
        var extensions: [String: [String]] = [:]

        mutating func run(
            from sender: String, to recipients: [String], message: (_ eightBit: Bool) -> [UInt8]
        ) async throws -> [Refusal] {
            try check(await reply(), "the greeting", expecting: 220)
            try await hello()
            if client.security == .starttls {
                guard extensions["STARTTLS"] != nil else { throw SMTPError.startTLSNotOffered }
                try await command("STARTTLS", expecting: 220)
                let (host, tls) = (client.host, client.tls!)
                try await channel.eventLoop.submit { [channel, boundary] in
                    // What came after the 220 came in clear: a reply an attacker slipped in before TLS.
                    guard boundary.withLock({ $0.clearBytesWaiting }) == false else {
                        throw SMTPError.garbled("data in clear after the 220 to STARTTLS")
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        try SMTPClient.tlsHandler(tls, host: host), position: .first)
                    boundary.withLock { $0.encrypted = true }
                }.get()
                try await hello()
            }
            if let credentials = client.credentials { try await authenticate(credentials) }

            let eightBit = extensions["8BITMIME"] != nil
            try await command("MAIL FROM:<\(sender)>" + (eightBit ? " BODY=8BITMIME" : ""), expecting: 250)
            var refused: [Refusal] = []
            for recipient in recipients {
                try await write("RCPT TO:<\(recipient)>")
                let reply = try await reply()
                switch reply.code {
                case 250, 251: continue
                // Refused for good: the others still get it. A 4xx waits for the queue's retry, for everyone.
                case 500..<600: refused.append(Refusal(recipient: recipient, reply: reply))
                default: try check(reply, "RCPT TO:<\(recipient)>", expecting: 250)
                }
            }
            if refused.count == recipients.count {
                throw SMTPError.everyRecipientRefused(refused.map(\.description).joined(separator: ", "))
            }
            try await command("DATA", expecting: 354)
            try await write(ByteBuffer(bytes: SMTPClient.dotStuffed(message(eightBit))))
            try check(await reply(), "the message (after DATA)", expecting: 250)
            // Delivered: what QUIT gets (or doesn't) changes nothing, and must not make the queue send it again.
            try? await write("QUIT")
            _ = try? await reply()
            return refused
        }

        /// EHLO, and what it advertises; HELO where a server knows no EHLO and nothing needs its extensions.
        private mutating func hello() async throws {
            try await write("EHLO \(client.helo)")
            let reply = try await reply()
            if reply.code == 500 || reply.code == 502, client.security == .none, client.credentials == nil {
                try await command("HELO \(client.helo)", expecting: 250)
                extensions = [:]
                return
            }
            try check(reply, "EHLO", expecting: 250)
            extensions = [:]
            for line in reply.lines.dropFirst() {
                let words = line.split(separator: " ").map { String($0).uppercased() }
                guard let keyword = words.first else { continue }
                extensions[keyword] = Array(words.dropFirst())
            }
        }

        /// AUTH PLAIN, or LOGIN where the server offers only that; only ever on a TLS connection.
        private mutating func authenticate(_ credentials: Credentials) async throws {
            guard client.security != .none else { throw SMTPError.credentialsInClear }
            let offered = extensions["AUTH"] ?? []
            func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
            if offered.contains("PLAIN") {
                let token = base64("\0\(credentials.username)\0\(credentials.password)")
                try await command("AUTH PLAIN " + token, shown: "AUTH PLAIN", expecting: 235)
            } else if offered.contains("LOGIN") {
                try await command("AUTH LOGIN", expecting: 334)
                try await command(base64(credentials.username), shown: "AUTH LOGIN (user name)", expecting: 334)
                try await command(base64(credentials.password), shown: "AUTH LOGIN (password)", expecting: 235)
            } else {
                throw SMTPError.noAuthentication(offered: offered)
            }
        }

        /// Sends `text` and checks the reply's code; `shown` is what an error calls the command (never a secret).
        private mutating func command(_ text: String, shown: String? = nil, expecting code: Int) async throws {
            try await write(text)
            try check(await reply(), shown ?? text, expecting: code)
        }

        private func check(_ reply: SMTPReply, _ command: String, expecting code: Int) throws {
            guard reply.code != code else { return }
            switch reply.code {
            case 400..<600: throw SMTPError.refused(command: command, reply: reply)
            default: throw SMTPError.garbled("\(reply.code) (expected \(code)) to \(command)")
            }
        }

        private mutating func write(_ line: String) async throws {
            try await write(ByteBuffer(string: line + "\r\n"))
        }

        private mutating func write(_ bytes: ByteBuffer) async throws {
            do {
                try await outbound.write(bytes)
            } catch {
                // A write to a closed connection says only that; the reading side knows why (a TLS handshake
                // that failed, a reset), and throws that.
                while try await lines.next() != nil {}
                throw error
            }
        }

        /// The next reply, all its lines.
        private mutating func reply() async throws -> SMTPReply {
            var parser = SMTPReply.Parser()
            while true {
                guard let line = try await lines.next() else {
                    throw SMTPError.connection("the server closed the connection")
                }
                if !line.encrypted && boundary.withLock({ $0.encrypted }) {
                    throw SMTPError.garbled("data in clear after the 220 to STARTTLS")
                }
                if let reply = try parser.take(line.text) { return reply }
            }
        }

    }
}

/// A server's reply: its code and the text of each of its lines.
struct SMTPReply: Sendable, Hashable, CustomStringConvertible {
    var code: Int
    var lines: [String]

    var description: String {
        "\(code) " + Template.clip(UnsafeText.escaped(lines.joined(separator: " ")), 300)
    }

    /// Reads the lines of one reply (`250-first`, `250 last`): a reply, once its last line has come.
    struct Parser {
        private var code: Int?
        private var lines: [String] = []

        mutating func take(_ line: String) throws(SMTPError) -> SMTPReply? {
            let bytes = Array(line.utf8.prefix(4))
            guard bytes.count >= 3, bytes[0...2].allSatisfy({ (0x30...0x39).contains($0) }),
                (0x32...0x35).contains(bytes[0]), bytes.count == 3 || bytes[3] == 0x20 || bytes[3] == 0x2D,
                let code = Int(String(decoding: bytes[0...2], as: UTF8.self)), self.code == nil || self.code == code,
                lines.count < 100
            else {
                throw .garbled(Template.clip(UnsafeText.escaped(line), 100))
            }
            lines.append(String(line.dropFirst(4)))
            if bytes.count == 3 || bytes[3] == 0x20 {
                defer { self = Parser() }
                return SMTPReply(code: code, lines: lines)
            }
            self.code = code
            return nil
        }
    }
}

/// Why an attempt did not hand the message over.
enum SMTPError: Error, Sendable, CustomStringConvertible {
    /// The server answered a command with 4xx (try later) or 5xx (never).
    case refused(command: String, reply: SMTPReply)
    /// Every recipient was refused for good.
    case everyRecipientRefused(String)
    /// `tls: starttls`, and the server does not offer STARTTLS: nothing is sent in clear instead.
    case startTLSNotOffered
    /// Credentials are configured, and the server offers neither AUTH PLAIN nor AUTH LOGIN.
    case noAuthentication(offered: [String])
    /// Credentials, and a connection that is not encrypted (the settings refuse this; checked again here).
    case credentialsInClear
    /// No connection, or it broke (refused, reset, TLS handshake or certificate).
    case connection(String)
    /// The server said something that is not an SMTP reply, or not one that fits.
    case garbled(String)
    /// The attempt took longer than the backend's timeout.
    case timedOut(Duration)

    /// True when trying again will not help: a 5xx, or a server that can't do what the settings require.
    var isPermanent: Bool {
        switch self {
        case .refused(_, let reply): reply.code >= 500
        case .everyRecipientRefused, .startTLSNotOffered, .noAuthentication, .credentialsInClear: true
        case .connection, .garbled, .timedOut: false
        }
    }

    var description: String {
        switch self {
        case .refused(let command, let reply): "the server answered \(reply) to \(command)"
        case .everyRecipientRefused(let refusals): "the server refused every recipient: \(refusals)"
        case .startTLSNotOffered:
            "the server does not offer STARTTLS (tls: starttls); not sending in clear (use tls: implicit for port 465)"
        case .noAuthentication(let offered):
            "the server offers no AUTH PLAIN or LOGIN (it offers \(offered.isEmpty ? "none" : offered.joined(separator: " ")))"
        case .credentialsInClear: "refusing to send the password over a connection that is not encrypted"
        case .connection(let reason): UnsafeText.escaped(reason)
        case .garbled(let reply): "not an SMTP reply: \(reply)"
        case .timedOut(let timeout): "timed out: not done within \(DurationText.format(timeout))"
        }
    }
}

/// One line from the server, and whether it came over TLS.
struct SMTPLine: Sendable {
    var text: String
    var encrypted: Bool
}

/// Where the connection stands with TLS, kept by the decoder and the dialogue on the connection's event loop.
struct TLSBoundary: Sendable {
    var encrypted: Bool
    /// Bytes that came in clear and are not yet a whole line.
    var clearBytesWaiting = false
}

/// Splits what the server sends into lines (without their CRLF); a line too long for a reply is an error.
struct SMTPLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPLine
    let boundary: Locked<TLSBoundary>
    /// RFC 5321 allows 512 bytes a reply line; some servers say more.
    static let maximumLength = 4096

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let encrypted = boundary.withLock { $0.encrypted }
        defer { if !encrypted { boundary.withLock { $0.clearBytesWaiting = buffer.readableBytes > 0 } } }
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLength { throw SMTPError.garbled("a line longer than 4096 bytes") }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        guard length <= Self.maximumLength else { throw SMTPError.garbled("a line longer than 4096 bytes") }
        var bytes = buffer.readBytes(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        context.fireChannelRead(
            wrapInboundOut(SMTPLine(text: String(decoding: bytes, as: UTF8.self), encrypted: encrypted)))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}
