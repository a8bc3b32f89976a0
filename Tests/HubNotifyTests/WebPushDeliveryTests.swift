import Crypto
import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubNotify

/// The `webpush` backend through the router, against a local stand-in for push services (HTTPS, answering as
/// Mozilla's and Google's do); every request it receives is decrypted and its VAPID token verified by an
/// independent implementation (Tests/Peers/webpush_check.py: http_ece and py_vapid).
@Suite struct WebPushDeliveryTests {
    static func yaml(caFile: String) -> String {
        """
        notifiers:
          backends:
            browsers:
              type: webpush
              subject: mailto:hub@example.org
              ttl: 1h
              topic: "{sensor}"
              ca_file: \(caFile)
              retry_delay: 100ms
          rules:
            all: { backends: [browsers], title: "{sensor} is {new}", priority: high }
        """
    }

    /// Each browser gets its event encrypted for it alone, with the headers push services read; the one that chose
    /// `door*` gets no kitchen event; a 410 removes its device; a 429 is retried after its Retry-After.
    @Test func pushesReachEachChosenBrowserDecryptableAndSigned() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates.shared()
        let server = try await TestHTTPServer.start(tls: certificates.localhost) { request, index in
            if request.path.hasPrefix("/gone/") {
                return .init(status: 410, body: "push subscription has unsubscribed or expired.")
            }
            if request.path.hasPrefix("/busy/") && index == 0 {
                return .init(status: 429, headers: [("Retry-After", "1")], body: "slow down")
            }
            return .init(status: 201)
        }
        defer { Task { await server.stop() } }
        let store = DeviceStore(directory: directory.path)
        let base = "https://localhost:\(server.port)"
        let everything = WebPushSubscriber()
        let doors = WebPushSubscriber()
        let busy = WebPushSubscriber()
        func add(_ subscriber: WebPushSubscriber, _ path: String, _ choice: DeviceChoice = .everything)
            throws
            -> String
        {
            let subscription = try WebPushSubscription(
                endpoint: base + path, p256dh: subscriber.p256dh, auth: subscriber.authSecret)
            return try store.add(.webPush(subscription), choice: choice, now: .now).device.id
        }
        _ = try add(everything, "/wpush/everything")
        _ = try add(doors, "/wpush/doors", DeviceChoice(sensors: ["door*"]))
        _ = try add(busy, "/busy/1")
        let gone = try add(WebPushSubscriber(), "/gone/1")
        // A phone's APNs token is no browser: this backend leaves it alone.
        let phone = try store.add(.apns(token: String(repeating: "ab", count: 32)), now: .now).device.id

        let log = LogRecorder()
        let publicKey = try await withRouter(
            Self.yaml(caFile: certificates.caFile), directory: directory, log: log
        ) {
            router in
            router.submit(event("kitchen"))
            try await eventually("kitchen: two delivered (one after a 429), one retired") {
                let statistics = router.statistics.backends["browsers"]
                return statistics?.delivered == 2 && statistics?.failed == 1 && statistics?.retried == 1
            }
            router.submit(event("door front"))
            try await eventually("the door to every browser left") {
                router.statistics.backends["browsers"]?.delivered == 5
            }
            return try #require(router.webPushPublicKey)
        }
        #expect(server.requests.count { $0.path == "/wpush/doors" } == 1)
        #expect(server.requests.count { $0.path == "/busy/1" } == 3)
        #expect(server.requests.count { $0.path == "/gone/1" } == 1)

        // What the browsers got, decrypted and checked by the independent implementation.
        for (subscriber, path, sensors) in [
            (everything, "/wpush/everything", ["kitchen", "door front"]),
            (doors, "/wpush/doors", ["door front"]),
        ] {
            let requests = server.requests.filter { $0.path == path }
            #expect(requests.count == sensors.count)
            for (request, sensor) in zip(requests, sensors) {
                #expect(request.method == "POST")
                #expect(request.header("TTL") == "3600")
                #expect(request.header("Urgency") == "high")
                #expect(request.header("Content-Encoding") == "aes128gcm")
                #expect(request.header("Content-Type") == "application/octet-stream")
                #expect(request.header("Topic") == WebPushNotifier.topic(sensor))
                #expect(request.header("Topic")?.count == 32)
                let checked = try await subscriber.check(
                    endpoint: base + path, authorization: try #require(request.header("Authorization")),
                    body: request.body)
                #expect(checked.claims["aud"] as? String == base)
                #expect(checked.claims["sub"] as? String == "mailto:hub@example.org")
                #expect(checked.k == publicKey)
                let payload = try #require(
                    try JSONSerialization.jsonObject(with: Data(checked.plaintext.utf8)) as? [String: Any])
                #expect(payload["title"] as? String == "\(sensor) is open")
                #expect(payload["sensor"] as? String == sensor)
                #expect(payload["event"] as? String == "changed" && payload["status"] as? String == "open")
                #expect(
                    (payload["body"] as? String)?.isEmpty == false
                        && (payload["id"] as? String)?.isEmpty == false)
            }
        }
        // The browser that unsubscribed is gone from the store; the others, and the phone, stay. Routine: a notice.
        #expect(try Set(store.devices().map(\.id)).contains(gone) == false)
        #expect(try store.devices().count == 4 && store.devices().contains { $0.id == phone })
        let retired = log.all.filter { $0.metadata["error"]?.contains("unsubscribed") == true }
        #expect(retired.map(\.level) == [.notice], "\(retired)")
        // The VAPID key: made on first use, private to hubd, the one the API hands to browsers.
        var status = stat()
        #expect(stat(directory.file("vapid-key"), &status) == 0 && status.st_mode & 0o777 == 0o600)
        let pem = try String(contentsOfFile: directory.file("vapid-key"), encoding: .utf8)
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        #expect(base64URL(Array(key.publicKey.x963Representation)) == publicKey)
    }

    /// A browser that chose nothing the event matches is not a failure: nothing is sent and nothing counted.
    @Test func anEventNoBrowserChoseIsNoFailure() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates.shared()
        let server = try await TestHTTPServer.start(tls: certificates.localhost) { _, _ in
            .init(status: 201)
        }
        defer { Task { await server.stop() } }
        let subscriber = WebPushSubscriber()
        let subscription = try WebPushSubscription(
            endpoint: "https://localhost:\(server.port)/wpush/doors", p256dh: subscriber.p256dh,
            auth: subscriber.authSecret)
        try DeviceStore(directory: directory.path).add(
            .webPush(subscription), choice: DeviceChoice(sensors: ["door*"]), now: .now)
        let log = LogRecorder()
        try await withRouter(Self.yaml(caFile: certificates.caFile), directory: directory, log: log) {
            router in
            router.submit(event("kitchen"))
            router.submit(event("door back"))
            try await eventually("the door delivered") {
                router.statistics.backends["browsers"]?.delivered == 1
            }
            #expect(router.statistics.backends["browsers"]?.failed == 0)
        }
        #expect(server.requests.count == 1)
        #expect(!log.all.contains { $0.level >= .error }, "\(log.all.filter { $0.level >= .error })")
    }
}

extension WebPushDeliveryTests {
    /// A push service that refuses the hub's VAPID signature (403) or the message's size (413): failed for good,
    /// saying what to check, and the browsers are kept (their subscriptions are not what was wrong).
    @Test func refusalsFailSayingWhatToCheck() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates.shared()
        let server = try await TestHTTPServer.start(tls: certificates.localhost) { request, _ in
            request.path.hasPrefix("/forbidden")
                ? .init(status: 403, body: "the VAPID credentials do not correspond to those of the subscription")
                : .init(status: 413, body: "payload too large")
        }
        defer { Task { await server.stop() } }
        let store = DeviceStore(directory: directory.path)
        for path in ["/forbidden/1", "/large/1"] {
            let subscriber = WebPushSubscriber()
            try store.add(
                .webPush(
                    try WebPushSubscription(
                        endpoint: "https://localhost:\(server.port)\(path)", p256dh: subscriber.p256dh,
                        auth: subscriber.authSecret)), now: .now)
        }
        let log = LogRecorder()
        try await withRouter(Self.yaml(caFile: certificates.caFile), directory: directory, log: log) { router in
            router.submit(event("kitchen"))
            try await eventually("both failed") { router.statistics.backends["browsers"]?.failed == 2 }
        }
        let reasons = log.all.filter { $0.message == "notification failed" }.compactMap { $0.metadata["error"] }
        #expect(reasons.contains { $0.contains("HTTP 403: the VAPID credentials") && $0.contains("check subject") })
        #expect(reasons.contains { $0.contains("HTTP 413: the message is too large") })
        #expect(server.requests.count == 2)
        #expect(try store.devices().count == 2)
    }
}

/// The `webpush` settings: what is wrong is named by its key.
@Suite struct WebPushSettingsTests {
    @Test func errorsNameTheKey() throws {
        let directory = try TemporaryDirectory()
        func message(_ keys: String) -> String {
            do {
                _ = try NotifierConfiguration.parse(
                    "notifiers:\n  backends:\n    b: { type: webpush\(keys) }\n",
                    file: directory.file("hubd.yaml"))
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(message("").hasSuffix("hubd.yaml: notifiers.backends.b.subject: missing"))
        #expect(
            message(", subject: hub@example.org").contains(
                "is 'hub@example.org': a mailto: address or an https: URL (RFC 8292)"))
        #expect(
            message(", subject: 'mailto:a@b.org', urgency: urgent").contains(
                "very-low, low, normal or high"))
        #expect(message(", subject: 'mailto:a@b.org', ttl: 40d").contains("a duration from 0ms to 28d"))
        #expect(message(", subject: 'mailto:a@b.org', key_file: nokey.pem").contains("does not exist"))
        try "not a key".write(toFile: directory.file("bad.pem"), atomically: true, encoding: .utf8)
        #expect(
            message(", subject: 'mailto:a@b.org', key_file: bad.pem").contains(
                "is not a P-256 private key in PEM"))
        #expect(message(", subject: 'https://example.org/contact'") == "no error")
    }

    /// The key made on first use is the one used ever after (a browser subscribed with it); `key_file` names another.
    @Test func theVAPIDKeyIsMadeOnceOrGiven() throws {
        let directory = try TemporaryDirectory()
        func publicKey(_ keys: String = "") throws -> String? {
            let configuration = try NotifierConfiguration.parse(
                "notifiers:\n  backends:\n    b: { type: webpush, subject: 'mailto:a@b.org'\(keys) }\n",
                file: directory.file("hubd.yaml"))
            let notifier = try configuration.backends[0].makeNotifier(
                stateDirectory: directory.path, logger: .init(label: "test"), publish: nil)
            defer { (notifier as? WebPushNotifier)?.http.shutdownNow() }
            return (notifier as? WebPushNotifier)?.signer.publicKey
        }
        let made = try #require(try publicKey())
        #expect(try publicKey() == made)
        let given = P256.Signing.PrivateKey()
        try given.pemRepresentation.write(toFile: directory.file("vapid.pem"), atomically: true, encoding: .utf8)
        #expect(try publicKey(", key_file: vapid.pem") == base64URL(Array(given.publicKey.x963Representation)))
    }
}
