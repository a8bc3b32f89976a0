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

    /// A firing update of the group edits its message (`editMessageText`, the same message_id, new buttons): the
    /// bathroom joining as the kitchen resolves, then the cellar joining with the bathroom still wet (the update
    /// names both); all resolved is a new message (an edit is silent).
    @Test func aGroupUpdateEditsTheMessage() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, index in
            guard request.path.contains("/getUpdates") else {
                return .init(body: #"{"ok":true,"result":{"message_id":\#(77 + index),"chat":{"id":42}}}"#)
            }
            return .init(body: #"{"ok":true,"result":[]}"#)
        }
        defer { Task { await server.stop() } }
        try await withRouter(Self.groupedYAML(server.url), directory: directory) { router in
            router.submit(event("kitchen", "dry", "wet"))
            try await eventually("the first message") { Self.calls(server, "sendMessage").count == 1 }
            let first = try Self.json(Self.calls(server, "sendMessage")[0])
            router.submit(event("kitchen", "wet", "dry"))
            router.submit(event("bathroom", "dry", "wet"))
            try await eventually("the edit") { Self.calls(server, "editMessageText").count == 1 }
            let edit = try Self.json(Self.calls(server, "editMessageText")[0])
            #expect(edit["message_id"] as? Int == 77 && edit["chat_id"] as? String == "42")
            let text = edit["text"] as? String ?? ""
            #expect(text.contains("bathroom") && text.contains("Resolved: kitchen"), "\(text)")
            // New buttons: the first message's tokens named the kitchen alone.
            #expect(Self.buttons(edit).count == 2 && Self.buttons(edit) != Self.buttons(first), "\(edit)")
            #expect(Self.calls(server, "sendMessage").count == 1)

            router.submit(event("cellar", "dry", "wet"))
            try await eventually("the second edit") { Self.calls(server, "editMessageText").count == 2 }
            let second = try Self.json(Self.calls(server, "editMessageText")[1])
            let both = second["text"] as? String ?? ""
            #expect(
                second["message_id"] as? Int == 77 && both.contains("bathroom") && both.contains("cellar"), "\(both)")
            #expect(Self.calls(server, "sendMessage").count == 1)

            router.submit(event("bathroom", "wet", "dry"))
            router.submit(event("cellar", "wet", "dry"))
            try await eventually("the resolved message") { Self.calls(server, "sendMessage").count == 2 }
            let resolved = try Self.json(Self.calls(server, "sendMessage")[1])
            #expect((resolved["text"] as? String)?.contains("no more") == true, "\(resolved)")
            #expect(Self.calls(server, "editMessageText").count == 2)
            try await eventually("four delivered") { router.statistics.backends["chat"]?.delivered == 4 }
        }
    }

    /// An edit Telegram refuses (the message was deleted) is sent as a new message in the same attempt: no retry.
    @Test func aFailedEditSendsANewMessage() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, index in
            if request.path.contains("/getUpdates") { return .init(body: #"{"ok":true,"result":[]}"#) }
            if request.path.hasSuffix("/editMessageText") {
                return .init(
                    status: 400,
                    body: #"{"ok":false,"error_code":400,"description":"Bad Request: message to edit not found"}"#)
            }
            return .init(body: #"{"ok":true,"result":{"message_id":\#(77 + index),"chat":{"id":42}}}"#)
        }
        defer { Task { await server.stop() } }
        try await withRouter(Self.groupedYAML(server.url), directory: directory) { router in
            router.submit(event("kitchen", "dry", "wet"))
            try await eventually("the first message") { Self.calls(server, "sendMessage").count == 1 }
            router.submit(event("kitchen", "wet", "dry"))
            router.submit(event("bathroom", "dry", "wet"))
            try await eventually("a new message after the refused edit") {
                Self.calls(server, "sendMessage").count == 2
            }
            #expect(Self.calls(server, "editMessageText").count == 1)
            #expect(try Self.json(Self.calls(server, "editMessageText")[0])["message_id"] as? Int == 77)
            let second = try Self.json(Self.calls(server, "sendMessage")[1])
            #expect((second["text"] as? String)?.contains("Resolved: kitchen") == true, "\(second)")
            #expect(Self.buttons(second).count == 2)
            try await eventually("both delivered") { router.statistics.backends["chat"]?.delivered == 2 }
            #expect(router.statistics.backends["chat"]?.retried == 0)
        }
    }

    /// One group for the whole rule, sent at once, its updates a second apart.
    /// Acknowledged elsewhere (here through the hub's link, as `POST /a/{token}` does): the buttons come off the
    /// group's Telegram message too, once; pressed on Telegram itself, they come off once, not twice.
    @Test func anAcknowledgementElsewhereTakesTheButtonsOff() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TestHTTPServer.start { request, _ in
            guard request.path.contains("/getUpdates") else {
                return .init(body: #"{"ok":true,"result":{"message_id":77,"chat":{"id":42}}}"#)
            }
            return .init(body: #"{"ok":true,"result":[]}"#)
        }
        defer { Task { await server.stop() } }
        try await withRouter(Self.groupedYAML(server.url), directory: directory) { router in
            router.submit(event("kitchen", "dry", "wet"))
            try await eventually("the message") { Self.calls(server, "sendMessage").count == 1 }
            let sent = try Self.json(Self.calls(server, "sendMessage")[0])
            let data = try #require(Self.buttons(sent).first)
            let token = String(data.dropFirst(TelegramNotifier.callbackPrefix.count))
            #expect(await router.answer(token, by: "ana", via: "link") == "Acknowledged.")
            try await eventually("the buttons taken off") { Self.calls(server, "editMessageReplyMarkup").count == 1 }
            let edit = try Self.json(Self.calls(server, "editMessageReplyMarkup")[0])
            #expect(edit["message_id"] as? Int == 77 && edit["chat_id"] as? String == "42")
            #expect(((edit["reply_markup"] as? [String: Any])?["inline_keyboard"] as? [Any])?.isEmpty == true)
            try await Task.sleep(for: .seconds(1))
            #expect(Self.calls(server, "editMessageReplyMarkup").count == 1)
            #expect(Self.calls(server, "sendMessage").count == 1, "no message about the acknowledgement")
        }
    }

    static func groupedYAML(_ url: String) -> String {
        """
        notifiers:
          backends:
            chat: { type: telegram, url: "\(url)", token: "123:abc", chat_id: "42" }
          rules:
            leak: { events: [changed], statuses: [wet], backends: [chat], group_wait: 0s, group_interval: 1s }
        """
    }

    static func calls(_ server: TestHTTPServer, _ method: String) -> [TestHTTPServer.Request] {
        server.requests.filter { $0.path.hasSuffix("/" + method) }
    }

    static func json(_ request: TestHTTPServer.Request) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
    }

    /// The callback_data of a request's inline buttons.
    static func buttons(_ body: [String: Any]) -> [String] {
        let rows = (body["reply_markup"] as? [String: Any])?["inline_keyboard"] as? [[[String: Any]]] ?? []
        return rows.flatMap { $0.compactMap { $0["callback_data"] as? String } }
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
