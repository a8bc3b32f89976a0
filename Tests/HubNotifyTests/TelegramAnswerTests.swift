import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// Telegram's inline buttons, read back through `getUpdates` (long polling: works behind NAT), against a local server
/// shaped like the Bot API: a press acknowledges the alert, is answered, and takes the buttons off the message; a
/// replayed press is refused and answered so.
@Suite struct TelegramAnswerTests {
    @Test func aButtonPressAcknowledgesTheAlert() async throws {
        let directory = try TemporaryDirectory()
        // What the phone presses: the callback_data of the first button, once the hub has sent it (twice: a replay).
        let pressed = Locked<(data: String?, served: Int)>((nil, 0))
        let server = try await TestHTTPServer.start { request, _ in
            guard request.path.contains("/getUpdates") else {
                return .init(body: #"{"ok":true,"result":{"message_id":77}}"#)
            }
            let update = pressed.withLock { state -> String? in
                guard let data = state.data, state.served < 2 else { return nil }
                state.served += 1
                return """
                    {"update_id":\(900 + state.served),"callback_query":{"id":"q\(state.served)","from":{"id":5,"username":"ana"},\
                    "message":{"message_id":77,"chat":{"id":42}},"data":"\(data)"}}
                    """
            }
            return .init(body: #"{"ok":true,"result":[\#(update ?? "")]}"#)
        }
        defer { Task { await server.stop() } }
        let yaml = """
            notifiers:
              backends:
                chat: { type: telegram, url: "\(server.url)", token: "123:abc", chat_id: "42" }
              rules:
                leak:
                  events: [changed]
                  statuses: [wet]
                  backends: [chat]
                  group_wait: 0s
            """
        try await withRouter(yaml, directory: directory) { router in
            router.submit(
                SensorEvent(
                    id: "k-1", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: "dry", newStatus: "wet",
                    time: .now))
            try await eventually("the message with its buttons") {
                server.requests.contains { $0.path.hasSuffix("/sendMessage") }
            }
            let sent = try #require(server.requests.first { $0.path.hasSuffix("/sendMessage") })
            let body = try #require(try JSONSerialization.jsonObject(with: Data(sent.body)) as? [String: Any])
            let keyboard = try #require(
                (body["reply_markup"] as? [String: Any])?["inline_keyboard"] as? [[[String: Any]]])
            #expect(keyboard.first?.map { $0["text"] as? String } == ["Acknowledge", "Snooze 1 h"])
            let data = try #require(keyboard.first?.first?["callback_data"] as? String)
            #expect(data.hasPrefix("sh:") && data.utf8.count <= 64)
            pressed.withLock { $0.data = data }

            try await eventually("both presses answered") {
                server.requests.filter { $0.path.hasSuffix("/answerCallbackQuery") }.count == 2
            }
            let answers = server.requests.filter { $0.path.hasSuffix("/answerCallbackQuery") }.map {
                (try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any])?["text"] as? String
            }
            #expect(answers.first == "Acknowledged.")
            #expect(answers.last??.hasPrefix("Not done: already used by @ana via chat") == true, "\(answers)")
            let edits = server.requests.filter { $0.path.hasSuffix("/editMessageReplyMarkup") }
            #expect(edits.count == 1)
            let edit = try #require(try JSONSerialization.jsonObject(with: Data(edits[0].body)) as? [String: Any])
            #expect(edit["message_id"] as? Int == 77 && edit["chat_id"] as? Int == 42)
            let alert = router.alerts.book.alerts["leak/kitchen/status"]
            #expect(alert?.acknowledged?.by == "@ana" && alert?.acknowledged?.via == "chat")
        }
    }

    /// A backend with no buttons the hub can hear (Gotify here) gets the actions as signed links in its text, and
    /// each link's token is one this hub verifies.
    @Test func gotifyGetsSignedLinks() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start()
        defer { Task { await server.stop() } }
        let yaml = """
            alerts:
              public_url: https://hub.example.net
            notifiers:
              backends:
                home: { type: gotify, url: "\(server.url)", token: "AbCdEf123" }
              rules:
                leak: { events: [changed], statuses: [wet], backends: [home], group_wait: 0s }
            """
        try await withRouter(yaml, directory: directory) { router in
            router.submit(
                SensorEvent(
                    id: "k-1", kind: .changed, sensor: "kitchen", topic: "kitchen", oldStatus: "dry", newStatus: "wet",
                    time: .now))
            let request = try #require(try await server.waitForRequests(1).first)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            let message = try #require(body["message"] as? String)
            let links = message.split(separator: "\n").filter { $0.contains("https://hub.example.net/a/") }
            #expect(links.count == 2 && links[0].hasPrefix("Acknowledge: ") && links[1].hasPrefix("Snooze 1 h: "))
            let key = try #require(router.actionKey())
            for link in links {
                let token = String(link.split(separator: "/").last ?? "")
                #expect(throws: Never.self) { try ActionToken(verifying: token, key: key, now: .now) }
            }
        }
    }
}
