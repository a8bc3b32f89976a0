import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// Matrix reactions read through `/sync`, and a group's later messages as `m.replace` edits, against a local server
/// shaped like the client-server API (`ReactingHomeserver`).
@Suite struct MatrixAnswerTests {
    static let room = "!abc:example.org"

    static func yaml(_ url: String) -> String {
        """
        notifiers:
          backends:
            room: { type: matrix, homeserver: "\(url)", token: hub-token, room: "\(room)" }
          rules:
            leak: { events: [changed], statuses: [wet], backends: [room], group_wait: 0s, group_interval: 1s }
        """
    }

    /// The message names its reactions and carries their tokens; after a restart, the first `/sync` (history: a ✅
    /// from before) only takes the position; then a ✅ acknowledges as its sender (the bot's own ✅ in the same batch
    /// is ignored) with "Acknowledged." as a reply, and a second ✅ (the token is used) is refused with a reply.
    @Test func aReactionAcknowledgesTheAlert() async throws {
        let directory = try TemporaryDirectory()
        let homeserver = ReactingHomeserver()
        let server = try await TestHTTPServer.start { request, _ in homeserver.answer(request) }
        defer { Task { await server.stop() } }
        let original = try await withRouter(Self.yaml(server.url), directory: directory) { router in
            router.submit(event("kitchen", "dry", "wet"))
            try await eventually("the message") { homeserver.messages.count == 1 }
            let message = try #require(homeserver.messages.first)
            let body = message.content["body"] as? String ?? ""
            #expect(body.hasSuffix("\nReact with ✅ to acknowledge, 💤 to snooze 1 h."), "\(body)")
            let actions = try #require(message.content["org.sensorhub.actions"] as? [String: String])
            #expect(actions.keys.sorted() == ["✅", "💤"])
            let key = try #require(router.actionKey())
            for token in actions.values {
                #expect(throws: Never.self) { try ActionToken(verifying: token, key: key, now: .now) }
            }
            // The listener starts beside the first delivery: on a loaded machine its first /sync can come after it.
            try await eventually("the first /sync") {
                server.requests.contains { $0.path.hasPrefix("/_matrix/client/v3/sync?") }
            }
            let sync = try #require(server.requests.first { $0.path.hasPrefix("/_matrix/client/v3/sync?") })
            let filter = Self.query(sync.path)["filter"] ?? ""
            #expect(filter.contains(#""types":["m.reaction"]"#) && filter.contains(#""rooms":["!abc:example.org"]"#))
            #expect(Self.query(sync.path)["since"] == nil)
            return message.id
        }

        // hubd restarts: a ✅ from before is in the room's history.
        homeserver.history = [ReactingHomeserver.reaction("$old-1", by: "@ana:example.org", on: original)]
        let before = server.requests.count
        try await withRouter(Self.yaml(server.url), directory: directory) { router in
            try await eventually("a /sync after the first") {
                server.requests.dropFirst(before).contains { Self.query($0.path)["since"] == "b1" }
            }
            #expect(!server.requests.dropFirst(before).contains { $0.path.contains("/event/") })
            #expect(homeserver.replies.isEmpty)
            #expect(router.alerts.book.alerts["leak/kitchen/status"]?.acknowledged == nil)

            homeserver.react([
                ReactingHomeserver.reaction("$r-1", by: "@hub:example.org", on: original),
                ReactingHomeserver.reaction("$r-2", by: "@ana:example.org", on: original, key: "✅\u{FE0F}"),
            ])
            try await eventually("the answer") { homeserver.replies.count >= 1 }
            let reply = homeserver.replies[0]
            #expect(reply["body"] as? String == "Acknowledged." && reply["msgtype"] as? String == "m.notice")
            let relation = reply["m.relates_to"] as? [String: [String: String]]
            #expect(relation?["m.in_reply_to"]?["event_id"] == original)
            let alert = router.alerts.book.alerts["leak/kitchen/status"]
            #expect(alert?.acknowledged?.by == "@ana:example.org" && alert?.acknowledged?.via == "room")

            homeserver.react([ReactingHomeserver.reaction("$r-3", by: "@bob:example.org", on: original)])
            try await eventually("the second answer") { homeserver.replies.count == 2 }
            let refused = homeserver.replies[1]["body"] as? String ?? ""
            #expect(refused.hasPrefix("Not done: already used by @ana:example.org via room"), "\(refused)")
            #expect(router.alerts.book.alerts["leak/kitchen/status"]?.acknowledged?.by == "@ana:example.org")
        }
    }

    /// A firing update of the group (the bathroom joins as the kitchen resolves) edits its message:
    /// `m.replace`, the `* ` fallback, the new content with new tokens; a ✅ on the original takes the edit's tokens
    /// (bundled by the server), which name the bathroom; all resolved is a new message.
    @Test func aGroupUpdateEditsTheEvent() async throws {
        let directory = try TemporaryDirectory()
        let homeserver = ReactingHomeserver()
        let server = try await TestHTTPServer.start { request, _ in homeserver.answer(request) }
        defer { Task { await server.stop() } }
        try await withRouter(Self.yaml(server.url), directory: directory) { router in
            router.submit(event("kitchen", "dry", "wet"))
            try await eventually("the message") { homeserver.messages.count == 1 }
            let original = homeserver.messages[0]
            router.submit(event("kitchen", "wet", "dry"))
            router.submit(event("bathroom", "dry", "wet"))
            try await eventually("the edit") { homeserver.messages.count == 2 }
            let edit = homeserver.messages[1].content
            let relation = edit["m.relates_to"] as? [String: String]
            #expect(relation == ["rel_type": "m.replace", "event_id": original.id])
            let new = try #require(edit["m.new_content"] as? [String: Any])
            let text = new["body"] as? String ?? ""
            #expect(text.contains("bathroom") && text.contains("Resolved: kitchen") && !text.hasPrefix("* "), "\(text)")
            #expect(edit["body"] as? String == "* " + text)
            #expect((edit["formatted_body"] as? String)?.hasPrefix("* <strong>") == true)
            let tokens = new["org.sensorhub.actions"] as? [String: String]
            let old = original.content["org.sensorhub.actions"] as? [String: String]
            #expect(tokens?.count == 2 && tokens?["✅"] != old?["✅"])

            homeserver.react([ReactingHomeserver.reaction("$r-1", by: "@ana:example.org", on: original.id)])
            try await eventually("the answer") { homeserver.replies.count == 1 }
            #expect(homeserver.replies[0]["body"] as? String == "Acknowledged.")
            #expect(router.alerts.book.alerts["leak/bathroom/status"]?.acknowledged?.by == "@ana:example.org")

            router.submit(event("bathroom", "wet", "dry"))
            try await eventually("the resolved message") { homeserver.messages.count == 3 }
            #expect(homeserver.messages[2].content["m.relates_to"] == nil)
            try await eventually("three delivered") { router.statistics.backends["room"]?.delivered == 3 }
        }
    }

    /// An edit the homeserver refuses (it no longer knows the event) is sent as a new message in the same attempt,
    /// with the notification's id as its transaction id: no retry.
    @Test func aFailedEditSendsANewMessage() async throws {
        let directory = try TemporaryDirectory()
        let homeserver = ReactingHomeserver()
        homeserver.unknown = ["$e1"]
        let server = try await TestHTTPServer.start { request, _ in homeserver.answer(request) }
        defer { Task { await server.stop() } }
        try await withRouter(Self.yaml(server.url), directory: directory) { router in
            router.submit(event("kitchen", "dry", "wet"))
            try await eventually("the message") { homeserver.messages.count == 1 }
            router.submit(event("kitchen", "wet", "dry"))
            router.submit(event("bathroom", "dry", "wet"))
            try await eventually("a new message") { homeserver.messages.count == 2 }
            #expect(homeserver.refused == 1)
            let second = homeserver.messages[1]
            #expect(second.content["m.relates_to"] == nil && second.id == "$e2")
            #expect((second.content["body"] as? String)?.contains("bathroom") == true)
            // The message's key: its group, the book's epoch (8 hex digits) and its number.
            #expect(second.transaction.hasPrefix("leak%231~") && second.transaction.hasSuffix(".2"))
            #expect(second.transaction.count == "leak%231~".count + 8 + 2)
            try await eventually("both delivered") { router.statistics.backends["room"]?.delivered == 2 }
            #expect(router.statistics.backends["room"]?.retried == 0)
        }
    }

    /// A request's query, decoded.
    static func query(_ path: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in path.split(separator: "?", maxSplits: 1).dropFirst().first?.split(separator: "&") ?? [] {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}

/// A homeserver as the reactions need it: `whoami`, messages sent with transaction ids (one event per id), events
/// read back with their newest edit bundled (`unsigned.m.relations`, as Matrix 1.7 has it), an edit of an event it
/// does not know refused as Synapse does (400), and `/sync` (the filter is not applied: the listener must check the
/// type itself) answering with `history` without `since`, then with the reactions given to `react`, in order.
final class ReactingHomeserver: Sendable {
    struct Message: @unchecked Sendable {
        var id: String
        var transaction: String
        var content: [String: Any]
        var json: String
    }

    private struct State: @unchecked Sendable {
        var messages: [Message] = []
        var replies: [[String: Any]] = []
        var history: [String] = []
        var batches: [[String]] = []
        var unknown: Set<String> = []
        var refused = 0
    }

    private let state = Locked(State())
    private let prefix = "/_matrix/client/v3/rooms/%21abc%3Aexample.org/"

    /// The messages (and edits) of the hub, not its replies.
    var messages: [Message] { state.withLock { $0.messages } }
    var replies: [[String: Any]] { state.withLock { $0.replies } }
    var refused: Int { state.withLock { $0.refused } }
    var history: [String] {
        get { state.withLock { $0.history } }
        set { state.withLock { $0.history = newValue } }
    }
    var unknown: Set<String> {
        get { state.withLock { $0.unknown } }
        set { state.withLock { $0.unknown = newValue } }
    }

    /// Reactions the next `/sync` with a `since` returns.
    func react(_ events: [String]) { state.withLock { $0.batches.append(events) } }

    static func reaction(_ id: String, by sender: String, on event: String, key: String = "✅") -> String {
        """
        {"type":"m.reaction","event_id":"\(id)","sender":"\(sender)","origin_server_ts":1,\
        "content":{"m.relates_to":{"rel_type":"m.annotation","event_id":"\(event)","key":"\(key)"}}}
        """
    }

    func answer(_ request: TestHTTPServer.Request) -> TestHTTPServer.Response {
        guard request.header("Authorization") == "Bearer hub-token" else {
            return .init(status: 401, body: #"{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token"}"#)
        }
        let path = String(request.path.split(separator: "?", maxSplits: 1)[0])
        return state.withLock { state in
            if path == "/_matrix/client/v3/account/whoami" {
                return .init(body: #"{"user_id":"@hub:example.org"}"#)
            }
            if path == "/_matrix/client/v3/sync" {
                let since = MatrixAnswerTests.query(request.path)["since"]
                var events = state.history
                var next = 1
                if let since, let number = Int(since.dropFirst()) {
                    events = state.batches.isEmpty ? [] : state.batches.removeFirst()
                    next = number + 1
                }
                let timeline = #"{"events":[\#(events.joined(separator: ","))],"limited":false}"#
                return .init(
                    body: #"{"next_batch":"b\#(next)","rooms":{"join":{"!abc:example.org":{"timeline":\#(timeline)}}}}"#
                )
            }
            if request.method == "PUT", path.hasPrefix(prefix + "send/m.room.message/") {
                let transaction = String(path.dropFirst((prefix + "send/m.room.message/").count))
                let content = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]) ?? [:]
                if let existing = state.messages.first(where: { $0.transaction == transaction }) {
                    return .init(body: #"{"event_id":"\#(existing.id)"}"#)
                }
                if transaction.hasPrefix("answer-") {
                    state.replies.append(content)
                    return .init(body: #"{"event_id":"$reply-\#(state.replies.count)"}"#)
                }
                if let relation = content["m.relates_to"] as? [String: Any],
                    let target = relation["event_id"] as? String, state.unknown.contains(target)
                {
                    state.refused += 1
                    return .init(
                        status: 400, body: #"{"errcode":"M_UNKNOWN","error":"Can't send relation to unknown event"}"#)
                }
                let id = "$e\(state.messages.count + 1)"
                state.messages.append(Message(id: id, transaction: transaction, content: content, json: request.text))
                return .init(body: #"{"event_id":"\#(id)"}"#)
            }
            if request.method == "GET", path.hasPrefix(prefix + "event/") {
                let id = String(path.dropFirst((prefix + "event/").count)).removingPercentEncoding ?? ""
                guard let message = state.messages.first(where: { $0.id == id }) else {
                    return .init(status: 404, body: #"{"errcode":"M_NOT_FOUND","error":"Event not found"}"#)
                }
                let edit = state.messages.last {
                    ($0.content["m.relates_to"] as? [String: Any])?["event_id"] as? String == id
                }
                let unsigned =
                    edit.map { edit in
                        #","unsigned":{"m.relations":{"m.replace":{"event_id":"\#(edit.id)","sender":"@hub:example.org","type":"m.room.message","content":\#(edit.json)}}}"#
                    } ?? ""
                return .init(
                    body:
                        #"{"event_id":"\#(id)","sender":"@hub:example.org","type":"m.room.message","content":\#(message.json)\#(unsigned)}"#
                )
            }
            return .init(status: 404, body: #"{"errcode":"M_UNRECOGNIZED","error":"Unrecognized request"}"#)
        }
    }
}
