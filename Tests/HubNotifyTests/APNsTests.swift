import Crypto
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

@Suite struct APNsTests {
    /// The push goes over HTTP/2 and TLS to /3/device/<token> with APNs's headers and a JWT that verifies with
    /// the key's public half; a 410 retires that device's token.
    @Test func pushReachesAnHTTP2ServerWithAVerifiableToken() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates.shared()
        let live = String(repeating: "ab", count: 32)
        let gone = String(repeating: "cd", count: 32)
        let server = try await TestHTTPServer.start(tls: certificates.localhost, http2: true) { request, _ in
            request.path.hasSuffix(gone)
                ? .init(status: 410, body: #"{"reason":"Unregistered","timestamp":1700000000000}"#) : .ok
        }
        defer { Task { await server.stop() } }
        let key = P256.Signing.PrivateKey()
        try key.pemRepresentation.write(toFile: directory.file("AuthKey.p8"), atomically: true, encoding: .utf8)
        let devices = DeviceStore(directory: directory.path)
        try devices.add(.apns(token: live))
        try devices.add(.apns(token: gone))
        let yaml = configuration(port: server.port, caFile: certificates.caFile)
        let log = LogRecorder()
        try await withRouter(yaml, directory: directory, log: log) { router in
            router.submit(event("front door"))
            try await eventually("one delivered, one retired") {
                router.statistics.backends["iphone"]?.delivered == 1
                    && router.statistics.backends["iphone"]?.failed == 1
            }
            let request = try #require(server.requests.first { $0.path == "/3/device/\(live)" })
            #expect(request.httpVersion == 2 && request.method == "POST")
            #expect(request.header("apns-topic") == "org.example.SensorHub")
            #expect(request.header("apns-push-type") == "alert")
            #expect(request.header("apns-priority") == "10")
            #expect(request.header("apns-collapse-id") == "front door")
            let expiration = try #require(Int(request.header("apns-expiration") ?? ""))
            #expect(abs(expiration - Int(Date().timeIntervalSince1970) - 3600) < 60)
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            let alert = (payload["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(alert?["title"] as? String == "front door is open")
            #expect(request.header("apns-id") == payload["id"] as? String)

            // The JWT: ES256 over header.claims, verified with the public key.
            let authorization = try #require(request.header("authorization"))
            #expect(authorization.hasPrefix("bearer "))
            let parts = authorization.dropFirst(7).split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let header = try decodeJSON(parts[0])
            let claims = try decodeJSON(parts[1])
            #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "KEY1234567")
            #expect(claims["iss"] as? String == "TEAM123456")
            #expect(abs((claims["iat"] as? Int ?? 0) - Int(Date().timeIntervalSince1970)) < 60)
            let signatureBytes = try #require(base64URLDecode(parts[2]))
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
            #expect(key.publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
            let other = P256.Signing.PrivateKey().publicKey
            #expect(!other.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))

            #expect(router.statistics.backends["iphone"]?.lastError?.contains("Unregistered") == true)
        }
        // A retired token is routine: a notice, not an error (issue 16, item 5).
        let retired = log.all.filter { $0.metadata["error"]?.contains("Unregistered") == true }
        #expect(retired.map(\.level) == [.notice], "\(retired)")
        #expect(retired.first?.message == "notification failed")
        #expect(!log.all.contains { $0.level >= .error })
        #expect(try devices.devices().map(\.token) == [live])
    }

    /// Each phone gets what it chose: one door events, one offline events, one (that chose nothing) everything; a
    /// Web Push subscription in the same store is not APNs's to reach.
    @Test func eachDeviceGetsWhatItChose() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates.shared()
        let server = try await TestHTTPServer.start(tls: certificates.localhost, http2: true) { _, _ in .ok }
        defer { Task { await server.stop() } }
        try P256.Signing.PrivateKey().pemRepresentation.write(
            toFile: directory.file("AuthKey.p8"), atomically: true, encoding: .utf8)
        let devices = DeviceStore(directory: directory.path)
        let doors = String(repeating: "d0", count: 32)
        let offline = String(repeating: "0f", count: 32)
        let all = String(repeating: "aa", count: 32)
        try devices.add(.apns(token: doors), choice: DeviceChoice(sensors: ["door*"], kinds: [.changed]))
        try devices.add(.apns(token: offline), choice: DeviceChoice(kinds: [.offline]))
        try devices.add(.apns(token: all))
        try devices.add(.webPush(WebPushSubscription(json: PushFixtures.subscription())))
        try await withRouter(configuration(port: server.port, caFile: certificates.caFile), directory: directory) {
            router in
            router.submit(event("Door front"))
            router.submit(event("kitchen", kind: .offline))
            router.submit(event("garage"))
            router.submit(event("door back", kind: .offline))
            try await eventually("every chosen push delivered") {
                let statistics = router.statistics
                return statistics.backends["iphone"]?.delivered ?? 0 >= 7 && statistics.outboxPending == 0
            }
            #expect(router.statistics.backends["iphone"]?.delivered == 7)
        }
        func sensors(_ token: String) throws -> [String] {
            try server.requests.filter { $0.path == "/3/device/\(token)" }.map { request in
                let payload = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
                return payload?["sensor"] as? String ?? "?"
            }.sorted()
        }
        #expect(try sensors(doors) == ["Door front"])
        #expect(try sensors(offline) == ["door back", "kitchen"])
        #expect(try sensors(all) == ["Door front", "door back", "garage", "kitchen"])
        #expect(server.requests.count == 7)
    }

    /// An apns backend `iphone` on a local server shaped like APNs, and a rule sending everything to it.
    func configuration(port: Int, caFile: String) -> String {
        """
        notifiers:
          backends:
            iphone:
              type: apns
              server: https://localhost:\(port)
              ca_file: \(caFile)
              bundle_id: org.example.SensorHub
              team_id: TEAM123456
              key_id: KEY1234567
              key_file: AuthKey.p8
              expiration: 1h
          rules:
            all: { backends: [iphone], title: "{sensor} is {new}" }
        """
    }

    /// Tokens are encrypted at rest, de-duplicated, and removable by id or token.
    @Test func deviceStoreEncryptsAndDeduplicates() throws {
        let directory = try TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        let token = String(repeating: "0f", count: 32)
        let first = try store.add(.apns(token: token))
        #expect(first.added)
        #expect(try store.add(.apns(token: token.uppercased())).added == false)
        #expect(try store.devices().count == 1)
        let file = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!file.contains(token))
        var status = stat()
        #expect(stat(directory.file(DeviceStore.keyFileName), &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(throws: DeviceError.self) { try store.add(.apns(token: "not-hex")) }
        #expect(throws: DeviceError.self) { try store.add(.apns(token: "abcd")) }
        #expect(try store.remove(first.device.id))
        #expect(try store.devices().isEmpty)
        try store.add(.apns(token: token))
        #expect(try store.remove(token))
        #expect(try store.remove(token) == false)
    }

    func decodeJSON(_ part: String) throws -> [String: Any] {
        let data = try #require(base64URLDecode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

@Suite struct NotifierConfigurationTests {
    @Test func errorsNameTheKey() {
        func message(_ yaml: String) -> String {
            do {
                _ = try NotifierConfiguration.parse(yaml)
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(
            message("notifiers:\n  backends:\n    a: { type: carrier-pigeon }").hasPrefix(
                "notifiers.backends.a.type: 'carrier-pigeon' is not a backend"))
        #expect(message("notifiers:\n  backends:\n    a: { type: file }") == "notifiers.backends.a.path: missing")
        #expect(
            message("notifiers:\n  backends:\n    a: { type: log, levle: info }").hasPrefix(
                "notifiers.backends.a.levle: unknown key"))
        #expect(
            message("notifiers:\n  rules:\n    r: { backends: [phone] }").hasPrefix(
                "notifiers.rules.r.backends[0]: no backend is named 'phone'"))
        #expect(
            message(
                "notifiers:\n  backends:\n    a: { type: log }\n  rules:\n    r: { backends: [a], title: '{sensr}' }"
            ).hasPrefix(
                "notifiers.rules.r.title (or $HUB_NOTIFIERS_RULES_R_TITLE) is '{sensr}': unknown placeholder {sensr}"))
        #expect(
            message("notifiers:\n  backends:\n    a: { type: log, timeout: soon }").hasPrefix(
                "notifiers.backends.a.timeout (or $HUB_NOTIFIERS_BACKENDS_A_TIMEOUT) is 'soon': a duration like"))
        #expect(
            message("notifiers:\n  backends:\n    a: { type: webhook, url: 'ftp://x' }").hasPrefix(
                "notifiers.backends.a.url (or $HUB_NOTIFIERS_BACKENDS_A_URL) is 'ftp://x': an http:// or https:// URL"))
        #expect(
            message(
                "notifiers:\n  backends:\n    a: { type: log }\n  rules:\n    r: { backends: [a], events: [exploded] }"
            ).hasPrefix("notifiers.rules.r.events[0]: 'exploded' is not an event"))
        #expect(
            message("notifiers:\n  backends:\n    a: { type: webhook, url: 'http://x', batch: 0 }").hasPrefix(
                "notifiers.backends.a.batch (or $HUB_NOTIFIERS_BACKENDS_A_BATCH) is '0': a whole number from 1 to 1000")
        )
        #expect(message("sensors:\n  qos: 1\n") == "no error")
    }

    /// conf/hubd.yaml's commented notifiers section, switched on, parses, and shows the apns backend's every key,
    /// server and ca_file too (issue 16, item 5).
    @Test func theDefaultConfigurationsNotifiersExampleWorks() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("conf/hubd.yaml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "# notifiers:"))
        let block = lines[start...].prefix { $0.hasPrefix("# ") || $0 == "#" }
            .filter { !$0.hasPrefix("#   Every backend") && !$0.hasPrefix("#   timeout") }
            .map { $0.dropFirst(2) }.joined(separator: "\n")
        let directory = try TemporaryDirectory()
        try P256.Signing.PrivateKey().pemRepresentation.write(
            toFile: directory.file("key.p8"), atomically: true, encoding: .utf8)
        let yaml = block.replacingOccurrences(
            of: "/etc/sensorhub/AuthKey_KEY1234567.p8", with: directory.file("key.p8"))
        let configuration = try NotifierConfiguration.parse(yaml)
        let apns = try #require(configuration.backends.first { $0.type == "apns" }?.settings as? APNsNotifier.Settings)
        #expect(apns.server == "https://api.push.apple.com")
        #expect(apns.caFile == "/etc/sensorhub/apns-ca.pem")
        for key in APNsNotifier.Settings.keys.map(\.name) where key != "collapse_id" && key != "expiration" {
            #expect(block.contains("  \(key): "), "conf/hubd.yaml does not show \(key)")
        }
    }

    /// The shipped configuration parses, and its commented example, switched on, does too.
    @Test func shippedConfigurationParses() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("conf/hubd.yaml"), encoding: .utf8)
        #expect(try NotifierConfiguration.parse(text).backends.isEmpty)
        let example = try String(contentsOf: root.appendingPathComponent("examples/notifiers.yaml"), encoding: .utf8)
        let configuration = try NotifierConfiguration.parse(
            example, file: root.appendingPathComponent("examples/notifiers.yaml").path)
        #expect(configuration.backends.count >= 5 && configuration.rules.count == 4)
        // hubd's own reader takes the same file.
        let hub = try HubConfiguration.load(
            option: root.appendingPathComponent("examples/notifiers.yaml").path, environment: [:])
        #expect(hub.qos == 1)
    }
}

/// The notifiers section is read like the rest of the file: the environment reaches a backend's every key, and a
/// secret may come from a file.
@Suite struct NotifierConfigurationEnvironmentTests {
    @Test func theEnvironmentOverridesABackendsKey() throws {
        let configuration = try NotifierConfiguration.parse(
            "notifiers:\n  backends:\n    hook: { type: webhook, url: 'http://127.0.0.1:1/a', timeout: 10s }\n",
            environment: [
                "HUB_NOTIFIERS_BACKENDS_HOOK_URL": "http://127.0.0.1:2/b", "HUB_NOTIFIERS_BACKENDS_HOOK_TIMEOUT": "3s",
            ])
        let hook = try #require(configuration.backends.first)
        #expect((hook.settings as? WebhookNotifier.Settings)?.url == "http://127.0.0.1:2/b")
        #expect(hook.policy.timeout == .seconds(3))
    }

    @Test func everyBackendKindIsListedOnceAndTakesTheQueueKeys() throws {
        let types = BackendSpec.kinds.map { $0.type }
        #expect(Set(types).count == types.count)
        #expect(
            types.sorted() == [
                "apns", "discord", "email", "exec", "file", "gotify", "log", "matrix", "mqtt", "ntfy", "pushover",
                "slack", "telegram", "webhook", "webpush",
            ])
        for kind in BackendSpec.kinds {
            #expect(
                Set(kind.keys.map(\.name)).isDisjoint(with: (DeliveryPolicy.keys + BackendSpec.commonKeys).map(\.name)),
                "\(kind.type)")
        }
    }
}
