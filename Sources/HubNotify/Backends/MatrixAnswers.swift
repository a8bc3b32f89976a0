import Foundation
import HubCore
import HubSupport
import Logging

/// Matrix has no buttons: people answer an alert's message with a reaction (an `m.reaction` event annotating it),
/// which the hub reads through `/sync` (long polling, so it works behind NAT, with no public address).
extension MatrixNotifier: AnswerListener {
    /// The content member of an alert's message holding its reactions' tokens: `{"✅": "<token>", "💤": "<token>"}`.
    static let actionsField = "org.sensorhub.actions"
    /// The most of a `/sync` answer read: with the filter (reactions in one room, 50 at most) a few kilobytes.
    static let syncLimit = 1 << 20

    /// Each action with the reaction that takes it: ✅ acknowledge, 💤 snooze (an action the hub does not know yet
    /// gets none).
    static func reactions(_ actions: [Notification.AlertContext.Action]) -> [(
        key: String, action: Notification.AlertContext.Action
    )] {
        actions.compactMap { action in
            switch action.title {
            case ActionToken.Action.acknowledge.word: ("✅", action)
            case ActionToken.Action.snooze.word: ("💤", action)
            default: nil
            }
        }
    }

    /// "React with ✅ to acknowledge, 💤 to snooze 1 h."
    static func reactionHint(_ reactions: [(key: String, action: Notification.AlertContext.Action)]) -> String {
        let parts = reactions.map {
            "\($0.key) to " + $0.action.title.prefix(1).lowercased() + $0.action.title.dropFirst()
        }
        return "React with " + parts.joined(separator: ", ") + "."
    }

    /// A reaction's key as compared: without the emoji presentation selector (U+FE0F) some clients add (`✅️`).
    static func normalized(_ key: String) -> String {
        String(String.UnicodeScalarView(key.unicodeScalars.filter { $0 != "\u{FE0F}" }))
    }

    /// Long-polls `/sync` for reactions in the room, filtered to `m.reaction` events there (nothing else is sent).
    /// A ✅ or 💤 by anyone but the hub's own account, on a message of the hub's that names that reaction, is taken
    /// as the answer of its sender (a Matrix user id), and the words are posted as a reply to the message.
    ///
    /// The first `/sync` (no `since`) only takes the position: reactions from before hubd started are not acted on
    /// (a token acts once anyway: the hub would refuse them). Reactions in encrypted rooms can't be read.
    func listen(logger: Logger, _ answer: @escaping @Sendable (_ token: String, _ by: String) async -> String) async {
        // The long poll ends before the backend's own timeout.
        let wait = max(0, min(25, Int(http.timeout.components.seconds) - 2))
        var since: String?
        var backoff = AnswerBackoff()
        while !Task.isCancelled {
            let asked = ContinuousClock.now
            let reactions: [Reaction]
            let token: String
            let room: String
            do {
                (token, room) = try await ready()
                let user = try await ownUser(token: token)
                var url =
                    settings.homeserver + "/_matrix/client/v3/sync?timeout=\(wait * 1000)&set_presence=offline&filter="
                    + WebText.percentEncoded(Self.filter(room: room))
                if let since { url += "&since=" + WebText.percentEncoded(since) }
                let reply = try await http.request(
                    .GET, url, headers: Self.authorization(token), body: nil, keeping: Self.syncLimit)
                try check(reply, token: token, what: "/sync")
                guard let tree = try? JSONTree.parse(Array(reply.body.utf8)),
                    case .string(let next)? = tree["next_batch"]
                else {
                    if reply.body.utf8.count >= Self.syncLimit {
                        // Too much to read whole: start again from now rather than fail on it for ever.
                        since = nil
                        logger.warning("Matrix /sync answered more than 1 MiB; reactions in it are skipped")
                    }
                    throw MatrixAnswerError(description: "/sync answered without next_batch")
                }
                reactions = since == nil ? [] : Self.reactions(in: tree, room: room, except: user)
                since = next
                backoff.succeeded()
            } catch {
                await backoff.failed("cannot fetch Matrix reactions", error, logger: logger)
                continue
            }
            for reaction in reactions {
                do {
                    try await take(reaction, token: token, room: room, answer)
                } catch {
                    logger.warning(
                        "cannot act on a Matrix reaction",
                        metadata: ["error": "\(error)", "event": "\(reaction.event)", "sender": "\(reaction.sender)"])
                }
            }
            // A server that answers a long poll at once with nothing is not asked again in a tight loop.
            if reactions.isEmpty && ContinuousClock.now - asked < .seconds(1) {
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One reaction seen in `/sync`: who put which key on which event.
    struct Reaction: Sendable, Equatable {
        var id: String
        var sender: String
        var event: String
        var key: String
    }

    /// The reactions of the room's timeline in a `/sync` answer that could be answers: ✅ or 💤, not by `user`.
    static func reactions(in tree: JSONTree, room: String, except user: String) -> [Reaction] {
        guard case .array(let events)? = tree["rooms"]?["join"]?[room]?["timeline"]?["events"] else { return [] }
        let keys = Set(["✅", "💤"])
        return events.compactMap { event in
            guard case .string("m.reaction")? = event["type"], case .string(let sender)? = event["sender"],
                sender != user, case .string(let id)? = event["event_id"],
                let relation = event["content"]?["m.relates_to"], case .string("m.annotation")? = relation["rel_type"],
                case .string(let target)? = relation["event_id"], case .string(let key)? = relation["key"],
                keys.contains(normalized(key))
            else { return nil }
            return Reaction(id: id, sender: sender, event: target, key: normalized(key))
        }
    }

    /// Acts on one reaction: the annotated message (one of the hub's own) gives the token for its key; the words go
    /// back as a reply to that message. A reaction to anything else is no answer.
    private func take(
        _ reaction: Reaction, token: String, room: String,
        _ answer: @Sendable (_ token: String, _ by: String) async -> String
    ) async throws {
        let user = try await ownUser(token: token)
        let message = try await event(reaction.event, room: room, token: token)
        guard case .string(user)? = message["sender"],
            let tokens = try await actions(of: message, room: room, token: token),
            case .string(let action)? = tokens.first(where: { Self.normalized($0.key) == reaction.key })?.value
        else { return }
        let words = await answer(action, reaction.sender)
        // The reaction's id as the transaction id: one reply per reaction, however often this is tried.
        let reply = await put("answer-" + reaction.id, room: room, token: token) { writer, first in
            writer.key("msgtype", first: &first)
            writer.string("m.notice")
            writer.key("body", first: &first)
            writer.string(words)
            writer.key("m.relates_to", first: &first)
            writer.raw(#"{"m.in_reply_to":{"event_id":"#)
            writer.string(reaction.event)
            writer.raw("}}")
        }
        if case .success(let reply) = reply {
            try check(reply, token: token, what: "the reply")
        } else if case .failure(let error) = reply {
            throw error
        }
    }

    /// The reactions' tokens of one of the hub's messages: those of its newest edit by the hub (the server bundles it
    /// in `unsigned.m.relations`, whole since Matrix 1.7, else by id: then it is fetched), else its own.
    private func actions(of message: JSONTree, room: String, token: String) async throws -> [JSONTree.Member]? {
        let user = message["sender"]
        if let replacement = message["unsigned"]?["m.relations"]?["m.replace"], replacement["sender"] == user {
            var edit = replacement
            if edit["content"] == nil, case .string(let id)? = replacement["event_id"] {
                edit = try await event(id, room: room, token: token)
            }
            if case .object(let members)? = edit["content"]?["m.new_content"]?[Self.actionsField] { return members }
        }
        guard case .object(let members)? = message["content"]?[Self.actionsField] else { return nil }
        return members
    }

    /// `GET /_matrix/client/v3/rooms/{room}/event/{id}`.
    private func event(_ id: String, room: String, token: String) async throws -> JSONTree {
        let url =
            settings.homeserver + "/_matrix/client/v3/rooms/" + WebText.percentEncoded(room) + "/event/"
            + WebText.percentEncoded(id)
        let reply = try await http.request(.GET, url, headers: Self.authorization(token), body: nil, keeping: 1 << 16)
        try check(reply, token: token, what: "the event \(id)")
        guard let tree = try? JSONTree.parse(Array(reply.body.utf8)) else {
            throw MatrixAnswerError(description: "the event \(id) is not JSON (or larger than 64 KiB)")
        }
        return tree
    }

    /// The access token and the room id, as sending finds them (a login, an alias resolved).
    private func ready() async throws -> (token: String, room: String) {
        let token = try await accessToken().get()
        return (token, try await roomID(token: token).get())
    }

    /// The account's own user id: from the login, else `GET /_matrix/client/v3/account/whoami`, once.
    private func ownUser(token: String) async throws -> String {
        if let user = session.withLock({ $0.user }) { return user }
        let what = "Matrix whoami at \(settings.host)"
        let answer: Result<HTTPDelivery.Answer, any Error>
        do {
            answer = .success(
                try await http.request(
                    .GET, settings.homeserver + "/_matrix/client/v3/account/whoami",
                    headers: Self.authorization(token), body: nil))
        } catch {
            answer = .failure(error)
        }
        let user = try Self.text("user_id", of: answer, what: what).get()
        session.withLock { $0.user = user }
        return user
    }

    /// Throws for an answer other than 200; a 401 to a login's token forgets it, so the next round logs in again.
    private func check(_ reply: HTTPDelivery.Answer, token: String, what: String) throws {
        guard reply.status != 200 else { return }
        if reply.status == 401, settings.user != nil {
            session.withLock { if $0.token == token { $0.token = nil } }
        }
        throw MatrixAnswerError(description: "\(Self.result(.success(reply), what: "Matrix \(what)"))")
    }

    /// The `/sync` filter: the room's `m.reaction` timeline events (50 at most per answer), and nothing else (no
    /// state, presence, receipts, typing or account data).
    static func filter(room: String) -> String {
        var writer = JSONWriter(capacity: 256, compact: true)
        writer.raw(#"{"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]},"room":{"rooms":["#)
        writer.string(room)
        writer.raw(
            #"],"timeline":{"types":["m.reaction"],"limit":50},"state":{"not_types":["*"]},"#
                + #""ephemeral":{"not_types":["*"]},"account_data":{"not_types":["*"]}}}"#)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

struct MatrixAnswerError: Error, CustomStringConvertible {
    var description: String
}
