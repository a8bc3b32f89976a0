import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// The `email` backend (issue 19) against a real SMTP server (aiosmtpd, `SMTPPeer`): STARTTLS and implicit TLS,
/// AUTH PLAIN and LOGIN, the message as a mail reader parses it, and what counts as delivered, retried and failed.
@Suite(.timeLimit(.minutes(2)))
struct EmailBackendTests {
    /// The backend's YAML, with the test CA and a password file in `directory`.
    func backend(_ peer: SMTPPeer, _ extra: String, directory: TemporaryDirectory) async throws -> String {
        try "secret\n".write(toFile: directory.file("smtp-password"), atomically: true, encoding: .utf8)
        return """
            { type: email, host: localhost, port: \(peer.port), from: "SensorHub <hub@example.org>", \
            ca_file: "\(try await TestCertificates.shared().caFile)", helo: hub.test, \(extra) }
            """
    }

    /// A `notifiers:` section with one backend, `mail`, and one rule sending every event to it.
    func notifiers(mail: String, templates: String) -> String {
        "notifiers:\n  backends:\n    mail: \(mail)\n  rules:\n    all: { backends: [mail], \(templates) }\n"
    }

    /// STARTTLS, then AUTH PLAIN; the headers a reader needs, a non-ASCII subject in encoded words, 8-bit text
    /// where the server takes it, a body line starting with "." intact, CRLF everywhere.
    @Test func startTLSDeliversAMessageAReaderParses() async throws {
        let directory = try TemporaryDirectory()
        let peer = try await SMTPPeer.start(tls: "starttls")
        defer { Task { await peer.stop() } }
        let mail = try await backend(
            peer,
            #"username: hub, password_file: smtp-password, to: [me@example.org, "Other, Person <o@example.org>"]"#,
            directory: directory)
        let yaml = notifiers(
            mail: mail, templates: #"title: "{sensor}: {new}", message: "was {old}\n.dot\n..two\n.\nend""#)
        let sent = event("Küche Tür", "zu ✗\rbare CR\nbare LF", "offen ✓")
        try await withRouter(yaml, directory: directory) { router in
            router.submit(sent)
            try await eventually("delivered") { router.statistics.backends["mail"]?.delivered == 1 }
        }
        let message = try #require(try await peer.messages(1).first)
        #expect(message["tls"] as? Bool == true && message["user"] as? String == "hub")
        #expect(peer.events("auth").map { $0["mechanism"] as? String } == ["PLAIN"])
        #expect(message["from"] as? String == "hub@example.org")
        #expect(message["to"] as? [String] == ["me@example.org", "o@example.org"])
        #expect((message["options"] as? [String])?.contains("BODY=8BITMIME") == true)
        #expect(message["subject"] as? String == "Küche Tür: offen ✓")
        let raw = message["raw"] as? String ?? ""
        #expect(raw.contains("Subject: =?UTF-8?B?"), "\(raw)")
        let headers = message["headers"] as? [String: String] ?? [:]
        #expect(headers["From"] == "SensorHub <hub@example.org>")
        #expect(headers["To"] == #"me@example.org, "Other, Person" <o@example.org>"#)
        #expect(headers["Message-ID"] == "<\(sent.id)@example.org>")
        #expect(headers["Auto-Submitted"] == "auto-generated" && headers["MIME-Version"] == "1.0")
        #expect(
            headers["Content-Type"] == "text/plain; charset=\"utf-8\""
                || headers["Content-Type"] == "text/plain; charset=utf-8")
        #expect(headers["Content-Transfer-Encoding"] == "8bit")
        #expect(headers["Date"]?.hasSuffix("+0000") == true)
        #expect(message["body"] as? String == "was zu ✗\r\nbare CR\r\nbare LF\r\n.dot\r\n..two\r\n.\r\nend\r\n")
        #expect(message["bare_line_breaks"] as? Int == 0 && message["defects"] as? [String] == [])
    }

    /// Implicit TLS (port 465 style), a server offering only AUTH LOGIN and no 8BITMIME: quoted-printable, lines
    /// within 76 bytes, a line longer than SMTP's 998 intact.
    @Test func implicitTLSWithLoginAndQuotedPrintable() async throws {
        let directory = try TemporaryDirectory()
        let peer = try await SMTPPeer.start(tls: "implicit", ["--auth", "LOGIN", "--no-8bitmime"])
        defer { Task { await peer.stop() } }
        let mail = try await backend(
            peer, "tls: implicit, username: hub, password: secret, to: me@example.org", directory: directory)
        let yaml = notifiers(mail: mail, templates: #"title: "{sensor}", message: "{new}{new}""#)
        let long = String(repeating: "é=", count: 300)
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("attic", "closed", long))
            try await eventually("delivered") { router.statistics.backends["mail"]?.delivered == 1 }
        }
        let message = try #require(try await peer.messages(1).first)
        #expect(peer.events("auth").map { $0["mechanism"] as? String } == ["LOGIN"])
        #expect(message["tls"] as? Bool == true && message["user"] as? String == "hub")
        #expect((message["headers"] as? [String: String])?["Content-Transfer-Encoding"] == "quoted-printable")
        #expect(message["body"] as? String == long + long + "\r\n")
        #expect((message["longest_line"] as? Int ?? 999) <= 76)
        #expect((message["raw"] as? String)?.unicodeScalars.allSatisfy { $0.isASCII } == true)
    }

    /// 451 to DATA is retried with the same Message-ID; a recipient refused for good is left out while the other
    /// gets it (and the log says so); every recipient refused, or 554 to DATA, fails. Also `tls: none`.
    @Test func temporaryFailuresAreRetriedAndPermanentOnesFail() async throws {
        let directory = try TemporaryDirectory()
        let answers =
            #"{"rcpt": {"nobody@example.org": "550 5.1.1 No such user"}, "#
            + #""data": ["451 4.3.0 Try again later", "250 OK", "554 5.6.0 Message rejected"]}"#
        let peer = try await SMTPPeer.start(tls: "none", ["--answers", answers])
        defer { Task { await peer.stop() } }
        let yaml = """
            notifiers:
              backends:
                mail: { type: email, tls: none, host: 127.0.0.1, port: \(peer.port), from: hub@example.org, \
            to: [me@example.org, nobody@example.org], retry_delay: 100ms }
                lost: { type: email, tls: none, host: 127.0.0.1, port: \(peer.port), from: hub@example.org, \
            to: nobody@example.org }
              rules:
                door: { backends: [mail], sensors: [door] }
                cellar: { backends: [lost], sensors: [cellar] }
            """
        let log = LogRecorder()
        let door = event("door")
        try await withRouter(yaml, directory: directory, log: log) { router in
            router.submit(door)
            try await eventually("delivered after a retry") { router.statistics.backends["mail"]?.delivered == 1 }
            #expect(router.statistics.backends["mail"]?.retried == 1)
            router.submit(event("cellar"))
            try await eventually("every recipient refused") { router.statistics.backends["lost"]?.failed == 1 }
            let error = router.statistics.backends["lost"]?.lastError ?? ""
            #expect(error.contains("550 5.1.1 No such user") && error.contains("nobody@example.org"), "\(error)")
            router.submit(event("door", "open", "closed"))
            try await eventually("554 to DATA fails") { router.statistics.backends["mail"]?.failed == 1 }
            #expect(router.statistics.backends["mail"]?.lastError?.contains("554 5.6.0") == true)
        }
        let messages = try await peer.messages(3)
        #expect(
            messages.map { $0["answer"] as? String } == [
                "451 4.3.0 Try again later", "250 OK", "554 5.6.0 Message rejected",
            ])
        let ids = messages.prefix(2).map { ($0["headers"] as? [String: String])?["Message-ID"] }
        #expect(ids == ["<\(door.id)@example.org>", "<\(door.id)@example.org>"])
        #expect(messages.allSatisfy { $0["to"] as? [String] == ["me@example.org"] && $0["tls"] as? Bool == false })
        #expect(log.all.contains { $0.level == .warning && $0.message.contains("1 of 2 recipients") })
    }

    /// A wrong password fails for good; a server that does not offer STARTTLS gets neither the password nor the
    /// message, though it offers AUTH in clear.
    @Test func wrongPasswordAndMissingStartTLSFail() async throws {
        let directory = try TemporaryDirectory()
        let tlsPeer = try await SMTPPeer.start(tls: "starttls", ["--password", "other"])
        defer { Task { await tlsPeer.stop() } }
        let plainPeer = try await SMTPPeer.start(tls: "none")
        defer { Task { await plainPeer.stop() } }
        let extra = "username: hub, password_file: smtp-password, to: me@example.org"
        let yaml = """
            notifiers:
              backends:
                wrong: \(try await backend(tlsPeer, extra, directory: directory))
                clear: \(try await backend(plainPeer, extra, directory: directory))
                anonymous: \(try await backend(plainPeer, "to: me@example.org", directory: directory))
              rules:
                each: { backends: [wrong, clear, anonymous] }
            """
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("door"))
            try await eventually("all three failed") {
                ["wrong", "clear", "anonymous"].allSatisfy { router.statistics.backends[$0]?.failed == 1 }
            }
            #expect(router.statistics.backends["wrong"]?.lastError?.contains("535") == true)
            #expect(router.statistics.backends["clear"]?.lastError?.contains("does not offer STARTTLS") == true)
            #expect(router.statistics.backends["wrong"]?.retried == 0)
        }
        try await eventually("the wrong password reported") { !tlsPeer.events("auth").isEmpty }
        #expect(tlsPeer.events("auth").map { $0["ok"] as? Bool } == [false] && tlsPeer.events("mail").isEmpty)
        #expect(plainPeer.events("auth").isEmpty && plainPeer.events("mail").isEmpty)
    }

    /// Line breaks in a status or a sensor's name end up as spaces in the subject: no header of their own.
    @Test func headerInjectionIsNeutralised() async throws {
        let directory = try TemporaryDirectory()
        let peer = try await SMTPPeer.start(tls: "none")
        defer { Task { await peer.stop() } }
        let yaml = notifiers(
            mail:
                "{ type: email, tls: none, host: localhost, port: \(peer.port), from: hub@example.org, to: me@example.org }",
            templates: #"title: "{sensor}: {new}""#)
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("door\nX-Evil: 1", "closed", "open\r\nBcc: victim@example.org\r\n\r\nbody"))
            try await eventually("delivered") { router.statistics.backends["mail"]?.delivered == 1 }
        }
        let message = try #require(try await peer.messages(1).first)
        let names = message["header_names"] as? [String] ?? []
        #expect(!names.contains("Bcc") && !names.contains("X-Evil") && names.filter { $0 == "Subject" }.count == 1)
        #expect(message["to"] as? [String] == ["me@example.org"])
        #expect(message["subject"] as? String == "door X-Evil: 1: open  Bcc: victim@example.org    body")
    }

    /// No server, a server that never speaks, a certificate from another CA, a reply slipped in clear behind
    /// STARTTLS's 220: each retried (the silent one at the timeout), and nothing sent.
    @Test func noAnswerAndUntrustedAnswersAreRetried() async throws {
        let directory = try TemporaryDirectory()
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                guard bind(silent, address, length) == 0, listen(silent, 8) == 0,
                    getsockname(silent, address, &length) == 0
                else { throw TestKitError("cannot listen: \(String(cString: strerror(errno)))") }
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let peer = try await SMTPPeer.start(tls: "starttls")
        defer { Task { await peer.stop() } }
        let injecting = try await SMTPPeer.start(tls: "starttls", ["--inject"])
        defer { Task { await injecting.stop() } }
        let other = try await TestCertificates.shared().otherCAFile
        let yaml = """
            notifiers:
              backends:
                silent: { type: email, tls: none, host: 127.0.0.1, port: \(port), from: h@example.org, to: m@example.org, timeout: 300ms }
                closed: { type: email, tls: none, host: 127.0.0.1, port: 1, from: h@example.org, to: m@example.org }
                untrusted: { type: email, host: localhost, port: \(peer.port), ca_file: "\(other)", from: h@example.org, to: m@example.org }
                injected: \(try await backend(injecting, "username: hub, password: secret, to: m@example.org", directory: directory))
              rules:
                all: { backends: [silent, closed, untrusted, injected] }
            """
        let names = ["silent", "closed", "untrusted", "injected"]
        try await withRouter(yaml, directory: directory) { router in
            router.submit(event("door"))
            try await eventually("all retried") {
                names.allSatisfy { router.statistics.backends[$0]?.retried ?? 0 >= 1 }
            }
            let errors = names.map { router.statistics.backends[$0]?.lastError ?? "" }
            #expect(errors[0].contains("timed out"), "\(errors[0])")
            #expect(errors[1].contains("cannot connect"), "\(errors[1])")
            #expect(errors[2].lowercased().contains("certificate"), "\(errors[2])")
            #expect(errors[3].contains("data in clear after the 220 to STARTTLS"), "\(errors[3])")
        }
        for server in [peer, injecting] {
            #expect(server.events("auth").isEmpty && server.events("mail").isEmpty)
        }
    }
}

/// The email backend's pieces that need no server: reading replies, dot-stuffing, encoded words, quoted-printable,
/// addresses, and settings refused with the key named.
@Suite struct EmailPartsTests {
    @Test func repliesAreReadWholeAndGarbageIsRefused() throws {
        var parser = SMTPReply.Parser()
        #expect(try parser.take("250-smtp.test") == nil)
        #expect(try parser.take("250-STARTTLS") == nil)
        #expect(
            try parser.take("250 AUTH PLAIN") == SMTPReply(code: 250, lines: ["smtp.test", "STARTTLS", "AUTH PLAIN"]))
        #expect(try parser.take("354") == SMTPReply(code: 354, lines: [""]))
        for garbage in ["HTTP/1.1 400 Bad Request", "25", "250x", "099 no", "650 no", "\u{1B}[31m"] {
            var fresh = SMTPReply.Parser()
            #expect(throws: SMTPError.self, "\(garbage)") { try fresh.take(garbage) }
        }
        _ = try parser.take("250-first")
        #expect(throws: SMTPError.self) { try parser.take("251 second") }
        #expect(SMTPError.refused(command: "DATA", reply: SMTPReply(code: 451, lines: ["later"])).isPermanent == false)
        #expect(SMTPError.refused(command: "DATA", reply: SMTPReply(code: 550, lines: ["no"])).isPermanent)
    }

    @Test func dotStuffingAndTheEndOfData() {
        let stuffed = SMTPClient.dotStuffed(Array(".a\r\nb\r\n..c\r\n.\r\nd".utf8))
        #expect(String(decoding: stuffed, as: UTF8.self) == "..a\r\nb\r\n...c\r\n..\r\nd\r\n.\r\n")
    }

    @Test func headersFoldAndEncodeWithinTheirLines() throws {
        #expect(EmailNotifier.encodedHeader("door: open", used: 9) == "door: open")
        let long = String(repeating: "word ", count: 40).trimmingCharacters(in: .whitespaces)
        let folded = EmailNotifier.encodedHeader(long, used: 9)
        #expect(folded.replacingOccurrences(of: "\r\n", with: "") == long)
        let text = String(repeating: "Küche 🚪 ", count: 30)
        let encoded = EmailNotifier.encodedHeader(text, used: 9)
        let lines = encoded.components(separatedBy: "\r\n")
        #expect(lines.count > 1 && lines.allSatisfy { $0.utf8.count <= 76 && $0.unicodeScalars.allSatisfy(\.isASCII) })
        let decoded = lines.map { line -> String in
            let word = line.trimmingCharacters(in: .whitespaces).dropFirst(10).dropLast(2)
            return String(decoding: Data(base64Encoded: String(word)) ?? Data(), as: UTF8.self)
        }
        #expect(decoded.joined() == text)
        #expect(EmailNotifier.quotedPrintable("a=b é ") == "a=3Db =C3=A9=20")
        let qp = EmailNotifier.quotedPrintable(Substring(String(repeating: "x", count: 200)))
        #expect(qp.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 })
        #expect(qp.replacingOccurrences(of: "=\r\n", with: "") == String(repeating: "x", count: 200))
    }

    @Test func theTransferEncodingFitsTheText() throws {
        func headers(_ body: String, eightBit: Bool) throws -> [String] {
            let notification = Notification(
                id: "abc", backend: "mail", rule: "all", event: event("door"), title: "t", body: body)
            let from = try #require(MailAddress("h@example.org"))
            let message = EmailNotifier.message(notification, from: from, to: [from], eightBit: eightBit)
            return String(decoding: message, as: UTF8.self).components(separatedBy: "\r\n")
        }
        #expect(try headers("plain", eightBit: false).contains("Content-Transfer-Encoding: 7bit"))
        #expect(try headers("é", eightBit: true).contains("Content-Transfer-Encoding: 8bit"))
        #expect(try headers("é", eightBit: false).contains("Content-Transfer-Encoding: quoted-printable"))
        #expect(try headers("a\u{0}b", eightBit: true).contains("Content-Transfer-Encoding: quoted-printable"))
        #expect(try headers("", eightBit: true).contains("Message-ID: <abc@example.org>"))
    }

    @Test func addressesAreStrict() {
        #expect(MailAddress("hub@example.org")?.header == "hub@example.org")
        #expect(MailAddress("SensorHub <hub@example.org>")?.header == "\"SensorHub\" <hub@example.org>")
        #expect(MailAddress("\"Hub \\\"1\\\"\" <a.b+c@mail.example.org>")?.address == "a.b+c@mail.example.org")
        #expect(MailAddress("Küche <k@example.org>")?.header == "=?UTF-8?B?S8O8Y2hl?= <k@example.org>")
        for bad in [
            "hub", "hub@", "@example.org", "a..b@example.org", "a@b@example.org", "a b@example.org",
            "me@example.org>\r\nBcc: x@y.org", "Name\n <a@example.org>", "a@-example.org", "ü@example.org",
        ] {
            #expect(MailAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func badSettingsAreRefusedNamingTheKey() throws {
        let good = "type: email, host: smtp.example.org, from: hub@example.org, to: me@example.org"
        #expect(backendError("{ \(good) }") == "")
        #expect(
            backendError("{ type: email, from: h@example.org, to: m@example.org }").contains(
                "notifiers.backends.x.host"))
        #expect(backendError("{ type: email, host: h, to: m@example.org }").contains("notifiers.backends.x.from"))
        #expect(backendError("{ type: email, host: h, from: h@example.org }").contains("notifiers.backends.x.to"))
        #expect(
            backendError("{ type: email, host: h, from: h@example.org, to: [m@example.org, nope] }").contains("to[1]"))
        #expect(backendError("{ \(good), tls: none, username: u, password: p }").contains("notifiers.backends.x.tls"))
        #expect(backendError("{ \(good), tls: ssl }").contains("starttls, implicit or none"))
        #expect(backendError("{ \(good), username: u }").contains("needs its password"))
        #expect(backendError("{ \(good), password: p }").contains("notifiers.backends.x.username"))
        #expect(backendError("{ \(good), smtp_host: x }").contains("notifiers.backends.x.smtp_host: unknown key"))
        #expect(
            backendError("{ type: email, host: \"a b\", from: h@example.org, to: m@example.org }").contains(
                "notifiers.backends.x.host"))
        let spec = try #require(
            try NotifierConfiguration.read(
                try ConfigNode.parse("notifiers:\n  backends:\n    x: { \(good), tls: implicit }\n", environment: [:])
            ).backends.first)
        #expect((spec.settings as? EmailNotifier.Settings)?.port == 465)
    }
}
