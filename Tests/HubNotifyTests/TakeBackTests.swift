import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// An acknowledgement reaches the other copies, against local servers shaped like the documented APIs: Pushover's
/// receipts are polled (a hub with no public address) and an acknowledgement in the app acknowledges the alert;
/// acknowledged elsewhere, the emergency's retries are cancelled (`/1/receipts/{receipt}/cancel.json`) and ntfy's
/// notification is cleared (`PUT /<topic>/<sequence id>/clear`); a backend that can take nothing back (a webhook)
/// gets no extra message.
@Suite struct TakeBackTests {
    static func yaml(_ url: String, publicURL: String? = nil) -> String {
        """
        \(publicURL.map { "alerts: { public_url: \"\($0)\" }" } ?? "")
        notifiers:
          backends:
            phone: { type: pushover, url: "\(url)", token: azGDORePK8gMaC0QOYAMyEEuzJnyUi, user: gznej3rKEVAvPUxu9vvNnqpmZpokzF }
            topic: { type: ntfy, url: "\(url)", topic: house }
            hook: { type: webhook, url: "\(url)/hook" }
          rules:
            leak: { events: [changed], statuses: [wet], backends: [phone, topic, hook], priority: urgent, group_wait: 0s }
        """
    }

    static let wet = SensorEvent(
        id: "kitchen-1", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: "dry", newStatus: "wet",
        time: .now)

    /// The phone acknowledges the emergency in the Pushover app: the hub, polling the receipt, acknowledges the alert
    /// (by the device), and clears ntfy's copy; the webhook hears nothing more.
    @Test func anAcknowledgementInThePushoverAppIsPolled() async throws {
        let directory = try TemporaryDirectory()
        let polls = Locked(0)
        let server = try await TestHTTPServer.start { request, _ in
            if request.path == "/1/messages.json" {
                return .init(body: #"{"status":1,"request":"req-1","receipt":"rZ7mQ2xK9pL4wN8vB3cT6yH1jF5dS0"}"#)
            }
            if request.path.hasPrefix("/1/receipts/rZ7mQ2xK9pL4wN8vB3cT6yH1jF5dS0.json") {
                let poll = polls.withLock { count -> Int in
                    count += 1
                    return count
                }
                let acknowledged = poll >= 2
                return .init(
                    body: """
                        {"status":1,"acknowledged":\(acknowledged ? 1 : 0),"acknowledged_at":\(acknowledged ? 1_798_000_000 : 0),\
                        "acknowledged_by":"gznej3rKEVAvPUxu9vvNnqpmZpokzF","acknowledged_by_device":"\(acknowledged ? "pixel" : "")",\
                        "expired":0,"expires_at":1798003600,"called_back":0,"request":"req-\(poll + 1)"}
                        """)
            }
            return .init(body: "{}")
        }
        defer { Task { await server.stop() } }
        try await withRouter(Self.yaml(server.url), directory: directory) { router in
            router.submit(Self.wet)
            try await eventually("sent to the three backends") {
                router.statistics.backends.values.reduce(0) { $0 + $1.delivered } == 3
            }
            let sent = try #require(server.requests.first { $0.path == "/1/messages.json" })
            let form = PushoverMatrixTests.form(sent.text)
            #expect(form["priority"] == "2" && form["callback"] == nil, "no public address: no callback, a receipt")
            let receipts = directory.file("pushover-phone.receipts.json")
            #expect(try String(contentsOfFile: receipts, encoding: .utf8).contains("rZ7mQ2xK9pL4wN8vB3cT6yH1jF5dS0"))

            try await eventually("acknowledged through the receipt", within: .seconds(20)) {
                router.alerts.book.alerts["leak/kitchen/status"]?.acknowledged != nil
            }
            let acknowledged = router.alerts.book.alerts["leak/kitchen/status"]?.acknowledged
            #expect(acknowledged?.by == "Pushover (pixel)" && acknowledged?.via == "phone")
            #expect(polls.withLock { $0 } == 2, "polled every 5 s until acknowledged, then no more")

            try await eventually("ntfy's copy cleared") {
                server.requests.contains { $0.method == "PUT" && $0.path.hasSuffix("/clear") }
            }
            let clear = try #require(server.requests.first { $0.method == "PUT" })
            let ntfyPost = try #require(server.requests.first { $0.path == "/house" })
            let sequence = try #require(ntfyPost.header("X-Sequence-ID"))
            #expect(clear.path == "/house/\(sequence)/clear")
            // The receipt was acknowledged on the phone already: nothing to cancel; the webhook got one message.
            try await Task.sleep(for: .seconds(1))
            #expect(!server.requests.contains { $0.path.contains("/cancel") })
            #expect(server.requests.filter { $0.path == "/hook" }.count == 1)
            #expect(try String(contentsOfFile: receipts, encoding: .utf8) == "[]")
            try await Task.sleep(for: .seconds(6))
            #expect(polls.withLock { $0 } == 2)
        }
    }

    /// Acknowledged through the hub's link (here: its button token, as `POST /a/{token}` would): Pushover, which
    /// would call back (a public address), is not polled, and its retries are cancelled.
    @Test func anAcknowledgementElsewhereCancelsPushoversRetries() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, _ in
            if request.path == "/1/messages.json" {
                return .init(body: #"{"status":1,"request":"req-1","receipt":"aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1"}"#)
            }
            return .init(body: #"{"status":1,"request":"req-2"}"#)
        }
        defer { Task { await server.stop() } }
        try await withRouter(Self.yaml(server.url, publicURL: "https://hub.example.net"), directory: directory) {
            router in
            router.submit(Self.wet)
            let sent = try #require(
                try await server.waitForRequests(3).first { $0.path == "/1/messages.json" })
            let form = PushoverMatrixTests.form(sent.text)
            let callback = try #require(form["callback"])
            #expect(callback.hasPrefix("https://hub.example.net/a/") && form["url"] == callback)
            let token = String(callback.split(separator: "/").last ?? "")
            #expect(await router.answer(token, by: "ana", via: "link") == "Acknowledged.")

            try await eventually("the emergency's retries cancelled") {
                server.requests.contains { $0.path == "/1/receipts/aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1/cancel.json" }
            }
            let cancel = try #require(server.requests.first { $0.path.hasSuffix("/cancel.json") })
            #expect(cancel.method == "POST" && PushoverMatrixTests.form(cancel.text)["token"] != nil)
            try await eventually("ntfy's copy cleared") { server.requests.contains { $0.method == "PUT" } }
            #expect(!server.requests.contains { $0.path.hasPrefix("/1/receipts/") && $0.method == "GET" })
            #expect(server.requests.filter { $0.path == "/hook" }.count == 1)
        }
    }
}
