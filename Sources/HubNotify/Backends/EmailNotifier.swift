import Foundation
import HubCore
import HubSupport
import Logging
import NIOSSL

/// `email`: one plain-text message (RFC 5322) per notification, handed to an SMTP server (`SMTPClient`) over
/// STARTTLS, implicit TLS, or (said explicitly) nothing. 2xx is delivered, 4xx and no answer are retried, 5xx fails;
/// recipients refused for good while others were taken are logged, and the rest get it.
///
/// The Message-ID is made from the notification's id, so a message sent again after an answer that was lost has
/// the same one, and a mail client shows it once.
struct EmailNotifier: Notifier {
    let settings: Settings
    let client: SMTPClient
    let logger: Logger

    /// The client ends each attempt at the backend's timeout itself.
    var enforcesTimeout: Bool { true }

    func send(_ notification: Notification) async -> DeliveryResult {
        let (from, to) = (settings.from, settings.to)
        do {
            let refused = try await client.send(from: from.address, to: to.map(\.address)) { eightBit in
                Self.message(notification, from: from, to: to, eightBit: eightBit)
            }
            if !refused.isEmpty {
                logger.warning(
                    "email delivered to \(to.count - refused.count) of \(to.count) recipients",
                    metadata: ["id": "\(notification.id)", "refused": "\(refused.map(\.description))"])
            }
            return .delivered
        } catch {
            let reason = "\(settings.host):\(settings.port): \(error)"
            return error.isPermanent ? .failed(reason: reason) : .retry(reason: reason)
        }
    }

    /// The message for `notification`, CRLF line endings, every line within 998 bytes.
    /// - Parameter eightBit: whether the server takes 8-bit text (else non-ASCII goes quoted-printable).
    static func message(_ notification: Notification, from: MailAddress, to: [MailAddress], eightBit: Bool) -> [UInt8] {
        let lines = notification.body.replacingOccurrences(of: "\r\n", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false).flatMap {
                $0.split(separator: "\r", omittingEmptySubsequences: false)
            }
        let ascii = notification.body.utf8.allSatisfy { $0 < 0x80 }
        // 7bit and 8bit text hold no NUL or other control characters but tabs, and no line longer than 998 bytes.
        let fits =
            lines.allSatisfy { $0.utf8.count <= 998 }
            && notification.body.utf8.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let encoding = fits && ascii ? "7bit" : fits && eightBit ? "8bit" : "quoted-printable"
        let domain = from.address[from.address.index(after: from.address.lastIndex(of: "@")!)...]
        let id = String(notification.id.unicodeScalars.map { Self.atext.contains($0) ? Character($0) : "-" })
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.timeZone = TimeZone(identifier: "UTC")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        var text = [
            "Date: " + date.string(from: notification.created.date),
            "From: " + from.header,
            "To: " + to.map(\.header).joined(separator: ",\r\n "),
            "Subject: " + encodedHeader(headerValue(notification.title), used: 9),
            "Message-ID: <\(id.isEmpty ? "sensorhub" : id)@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: " + encoding,
            "Auto-Submitted: auto-generated",
            "",
        ].joined(separator: "\r\n")
        text += "\r\n"
        for line in lines {
            text += encoding == "quoted-printable" ? quotedPrintable(line) : String(line)
            text += "\r\n"
        }
        return Array(text.utf8)
    }

    /// The characters a Message-ID's left part may hold (RFC 5322 `atext`, and `.`) that need no thought.
    private static let atext = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_".unicodeScalars)

    /// Header text `text` (no control characters left), folded: as it is when it is printable ASCII in words that
    /// fit a line, else RFC 2047 encoded words (UTF-8, base64), each within a 76-byte line.
    /// - Parameter used: how much of the first line the header's name takes.
    static func encodedHeader(_ text: String, used: Int) -> String {
        let words = text.split(separator: " ")
        let plain =
            text.utf8.allSatisfy { (0x20..<0x7F).contains($0) } && !text.contains("=?")
            && words.allSatisfy { $0.utf8.count <= 70 } && !text.hasPrefix(" ") && !text.contains("  ")
        var lines: [String] = []
        var line = ""
        var length = used
        func add(_ word: String) {
            if !line.isEmpty && length + 1 + word.utf8.count > 76 {
                lines.append(line)
                (line, length) = ("", 0)
            }
            if !line.isEmpty || !lines.isEmpty { (line, length) = (line + " ", length + 1) }
            (line, length) = (line + word, length + word.utf8.count)
        }
        if plain {
            words.forEach { add(String($0)) }
        } else {
            // At most 36 bytes of UTF-8 a word (48 in base64), never splitting a character's bytes.
            var chunk: [UInt8] = []
            for scalar in text.unicodeScalars {
                let bytes = Array(String(scalar).utf8)
                if chunk.count + bytes.count > 36 {
                    add("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                    chunk = []
                }
                chunk += bytes
            }
            if !chunk.isEmpty { add("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=") }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\r\n")
    }

    /// One line of text in quoted-printable (RFC 2045), soft-broken to lines of at most 76 bytes.
    static func quotedPrintable(_ line: Substring) -> String {
        var result = ""
        var length = 0
        let bytes = Array(line.utf8)
        for (index, byte) in bytes.enumerated() {
            let last = index == bytes.count - 1
            let literal = (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "=") || (byte == 0x20 && !last)
            let token = literal ? String(UnicodeScalar(byte)) : "=" + String(format: "%02X", byte)
            if length + token.count > (last ? 76 : 75) {
                result += "=\r\n"
                length = 0
            }
            result += token
            length += token.count
        }
        return result
    }
}

/// A mailbox: an address (ASCII `local@domain`, no quoted local parts or address literals), and a display name.
struct MailAddress: Sendable, Hashable {
    var name: String?
    var address: String

    /// `hub@example.org`, `SensorHub <hub@example.org>` or `"Hub, cellar" <hub@example.org>`.
    init?(_ text: String) {
        var address = text
        if text.hasSuffix(">"), let open = text.lastIndex(of: "<") {
            address = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
            var name = text[..<open].trimmingCharacters(in: .whitespaces)
            if name.count >= 2 && name.hasPrefix("\"") && name.hasSuffix("\"") {
                name = String(name.dropFirst().dropLast())
            }
            guard UnsafeText.problem(in: name) == nil, name.utf8.count <= 200 else { return nil }
            self.name = name.isEmpty ? nil : name
        }
        let atom = #"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"#
        let label = #"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"#
        let pattern = "^\(atom)(\\.\(atom))*@\(label)(\\.\(label))*$"
        guard address.range(of: pattern, options: .regularExpression) != nil, address.utf8.count <= 254,
            let at = address.lastIndex(of: "@"), address.distance(from: address.startIndex, to: at) <= 64
        else { return nil }
        self.address = address
    }

    /// As a From or To header shows it: the name quoted, or in encoded words where it is not plain ASCII.
    var header: String {
        guard let name else { return address }
        let printable = name.utf8.allSatisfy { (0x20..<0x7F).contains($0) } && name.utf8.count <= 60
        let shown =
            printable
            ? "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
            : EmailNotifier.encodedHeader(name, used: 4)
        return shown + " <\(address)>"
    }
}

extension EmailNotifier {
    struct Settings: BackendSettings {
        static let type = "email"
        static let linksInText = true
        static let summary =
            "A plain-text email through an SMTP server, such as your mail provider's submission server."
        static let keys = [
            ConfigKey(
                "host", "text",
                "Required. The SMTP server's host name or IP address (`smtp.example.org`)."),
            ConfigKey(
                "port", "integer 1–65535",
                "The SMTP server's port; without it, 587 with `tls: starttls`, 465 with `implicit`, 25 with `none`."),
            ConfigKey(
                "tls", "one of: starttls, implicit, none", default: "starttls",
                "`starttls`: STARTTLS on a plain connection, and nothing is sent to a server that does not offer it;"
                    + " `implicit`: TLS from the start; `none`: no encryption, only without a password (a local"
                    + " relay)."),
            ConfigKey(
                "username", "text",
                "The user to log in as (AUTH PLAIN, or LOGIN when that is all the server offers), with `password`."),
            ConfigKey(
                "password", "text", secret: true,
                "The password of `username`; better `password_file`. No login when both are left out."),
            ConfigKey(
                "from", "text",
                "Required. The sender: an address (`hub@example.org`), or a name and one (`SensorHub"
                    + " <hub@example.org>`)."),
            ConfigKey(
                "to", "list of texts",
                "Required. The recipients: one address, or a list of them, each as `from` takes it."),
            .caFile(for: "the server"),
            ConfigKey(
                "helo", "text",
                "The host name hubd gives in EHLO; this machine's host name when left out."),
        ]
        var host: String
        var port: Int
        var security: SMTPClient.Security
        var credentials: SMTPClient.Credentials?
        var from: MailAddress
        var to: [MailAddress]
        var caFile: String?
        /// The name the hub gives in EHLO: this machine's host name, unless said.
        var helo: String

        init(_ node: ConfigNode) throws(ConfigurationError) {
            host = try node["host"].required { node in try node.value("a host name or IP address", Self.hostName) }
            security =
                try node["tls"].value("starttls, implicit or none") { SMTPClient.Security(rawValue: $0) }
                ?? .starttls
            port = try node["port"].integer(in: 1...65_535) ?? [.starttls: 587, .implicit: 465, .none: 25][security]!
            let username = try node["username"].string()
            let password = try node.secret("password")
            if security == .none, username != nil || password != nil {
                throw node["tls"].invalid(
                    "tls: none would send the password in clear; use starttls (port 587) or implicit (port 465)")
            }
            switch (username, password) {
            case (let username?, let password?) where !username.isEmpty && !password.isEmpty:
                if let problem = UnsafeText.problem(in: password) {
                    throw node.secretSource("password").invalidValue("…", "it " + problem)
                }
                credentials = SMTPClient.Credentials(username: username, password: password)
            case (nil, nil): credentials = nil
            case (nil, _), ("", _): throw node["username"].invalid("a password needs its username")
            default: throw node.invalid("username \(username ?? "") needs its password: password_file (or password)")
            }
            let expected = "an address (hub@example.org), or a name and one: SensorHub <hub@example.org>"
            from = try node["from"].required { node in try node.value(expected) { MailAddress($0) } }
            let items = try node["to"].stringItems() ?? []
            guard !items.isEmpty else { throw node["to"].invalid("missing: one address, or a list of them") }
            to = try items.map { item throws(ConfigurationError) in
                guard let address = MailAddress(item.text) else { throw item.node.invalidValue(item.text, expected) }
                return address
            }
            caFile = try node["ca_file"].filePath()
            var name = [CChar](repeating: 0, count: 256)
            let machine =
                gethostname(&name, name.count - 1) == 0
                ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
            helo = try node["helo"].value("a host name", Self.hostName) ?? Self.hostName(machine) ?? "localhost"
        }

        /// `text` when it is a host name or an IP address (what EHLO and a connection take), else `nil`.
        static func hostName(_ text: String) -> String? {
            text.range(of: #"^[A-Za-z0-9]([A-Za-z0-9.:-]{0,252}[A-Za-z0-9])?$"#, options: .regularExpression) != nil
                ? text : nil
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            var tls: NIOSSLContext?
            if security != .none {
                do {
                    var configuration = TLSConfiguration.makeClientConfiguration()
                    if let caFile {
                        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
                    }
                    tls = try NIOSSLContext(configuration: configuration)
                } catch {
                    throw .invalid(
                        file: nil, key: "notifiers.backends.\(context.name).ca_file", line: nil,
                        reason: "cannot read the certificates in \(caFile ?? ""): \(error)")
                }
            }
            let client = SMTPClient(
                host: host, port: port, security: security, tls: tls, helo: helo, credentials: credentials,
                timeout: context.policy.timeout)
            return EmailNotifier(settings: self, client: client, logger: context.logger)
        }
    }
}
