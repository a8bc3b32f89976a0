import Foundation
import HubCore
import HubSupport
import NIOHTTP1

/// `matrix`: the client-server API's `PUT /_matrix/client/v3/rooms/{room}/send/m.room.message/{txnId}`, with the
/// notification's id as the transaction id: the homeserver de-duplicates a redelivery (after a timeout, a restart)
/// into the one message. The body is plain text, with an HTML `formatted_body` whose every character of the event is
/// escaped.
///
/// With an access token, that is all. With a user and password, hubd logs in once (as one stable device, so the
/// account does not collect a device per start) and logs in again when the server says the token is no longer
/// valid. A room alias (`#home:example.org`) is resolved to its id once.
///
/// An alert's message names the reactions that act on it (✅ acknowledge, 💤 snooze) and carries their tokens in
/// `org.sensorhub.actions`; `listen` (MatrixAnswers.swift) reads the reactions through `/sync`. A later message of
/// the group edits the group's message (an `m.replace` event) as `GroupMessages` decides; an edit the homeserver
/// refuses (it no longer knows the event) is sent as a new message in the same attempt.
struct MatrixNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery
    /// The access token, room id and the account's own user id found so far.
    let session = Locked(Session())
    /// The event id of each alert group's message, for the edits (this process only).
    let groups = GroupMessages<String>()

    struct Session {
        var token: String?
        var room: String?
        var user: String?
    }

    func send(_ notification: Notification) async -> DeliveryResult {
        let token: String
        switch await accessToken() {
        case .success(let value): token = value
        case .failure(let failure): return failure.result
        }
        let room: String
        switch await roomID(token: token) {
        case .success(let value): room = value
        case .failure(let failure): return failure.result
        }
        let what = "Matrix at \(settings.host)"
        if let original = groups.target(of: notification) {
            // A transaction id of its own: the new message that may follow keeps the notification's id.
            let answer = await put(notification.id + ".edit", room: room, token: token) { writer, first in
                writeEdit(of: original, notification, into: &writer, first: &first)
            }
            switch Self.result(answer, what: what) {
            case .delivered:
                groups.edited(original, for: notification)
                return .delivered
            case .failed(let reason):
                if case .success(let reply) = answer, reply.status == 401, settings.user != nil {
                    return relogin(token, reason)
                }
                // An event the homeserver no longer knows (or won't relate to): tell it in a new message.
                groups.forget(notification)
            case let result:
                return result
            }
        }
        let answer = await put(notification.id, room: room, token: token) { writer, first in
            writeContent(notification, into: &writer, first: &first)
        }
        let result = Self.result(answer, what: what)
        guard case .failed(let reason) = result, case .success(let answer) = answer else {
            if case .delivered = result, case .success(let reply) = answer,
                case .string(let event)? = (try? JSONTree.parse(Array(reply.body.utf8)))?["event_id"]
            {
                groups.sent(event, for: notification)
            }
            return result
        }
        if answer.status == 401, settings.user != nil { return relogin(token, reason) }
        return .failed(reason: reason + (answer.status == 403 ? " (has the account joined the room?)" : ""))
    }

    /// The token was logged out or expired: log in again, now.
    private func relogin(_ token: String, _ reason: String) -> DeliveryResult {
        session.withLock { if $0.token == token { $0.token = nil } }
        return .retry(reason: reason + "; logging in again", after: .zero)
    }

    /// PUTs one `m.room.message` event with transaction id `transaction`.
    func put(
        _ transaction: String, room: String, token: String, members: (inout JSONWriter, inout Bool) -> Void
    ) async -> Result<HTTPDelivery.Answer, any Error> {
        let url =
            settings.homeserver + "/_matrix/client/v3/rooms/" + WebText.percentEncoded(room)
            + "/send/m.room.message/" + WebText.percentEncoded(transaction)
        return await http.postJSON(url, method: .PUT, headers: Self.authorization(token), members: members)
    }

    /// The message's content: its text (with the reactions that act on it), as plain text and HTML, and the
    /// reactions' tokens.
    func writeContent(
        _ notification: Notification, prefix: String = "", into writer: inout JSONWriter, first: inout Bool
    ) {
        let reactions = Self.reactions(notification.alert?.actions ?? [])
        let body = notification.body + (reactions.isEmpty ? "" : "\n" + Self.reactionHint(reactions))
        writer.key("msgtype", first: &first)
        writer.string(settings.messageType)
        writer.key("body", first: &first)
        writer.string(prefix + notification.title + "\n" + body)
        writer.key("format", first: &first)
        writer.string("org.matrix.custom.html")
        writer.key("formatted_body", first: &first)
        writer.string(WebText.html(prefix) + Self.html(title: notification.title, body: body))
        guard !reactions.isEmpty else { return }
        writer.key(Self.actionsField, first: &first)
        writer.raw("{")
        var inner = true
        for (key, action) in reactions {
            writer.key(key, first: &inner)
            writer.string(action.token)
        }
        writer.raw("}")
    }

    /// An `m.replace` edit of `original`: the fallback (`* ` and the text) for clients without edits, the new content
    /// in `m.new_content`. The tokens are in both: a reaction to the edit itself (a client that shows it as a message
    /// of its own) works as well as one to the original.
    func writeEdit(of original: String, _ notification: Notification, into writer: inout JSONWriter, first: inout Bool)
    {
        writeContent(notification, prefix: "* ", into: &writer, first: &first)
        writer.key("m.new_content", first: &first)
        writer.raw("{")
        var inner = true
        writeContent(notification, into: &writer, first: &inner)
        writer.raw("}")
        writer.key("m.relates_to", first: &first)
        writer.raw(#"{"rel_type":"m.replace","event_id":"#)
        writer.string(original)
        writer.raw("}")
    }

    /// `<strong>title</strong><br>body`, every character of both escaped and line breaks kept.
    static func html(title: String, body: String) -> String {
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).map { WebText.html(String($0)) }
        return "<strong>" + WebText.html(title) + "</strong>"
            + (body.isEmpty ? "" : "<br>" + lines.joined(separator: "<br>"))
    }

    static func authorization(_ token: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer " + token)
        return headers
    }

    /// Why a step before the message could not be made, as the attempt's result.
    struct Failure: Error, CustomStringConvertible {
        var result: DeliveryResult
        var description: String { "\(result)" }
    }

    /// The configured token, or the one a login gave.
    func accessToken() async -> Result<String, Failure> {
        if let token = settings.token ?? session.withLock({ $0.token }) { return .success(token) }
        guard let user = settings.user, let password = settings.password else {
            return .failure(Failure(result: .failed(reason: "Matrix: no access token and no password")))
        }
        let what = "Matrix login at \(settings.host) as \(user)"
        let answer = await http.postJSON(settings.homeserver + "/_matrix/client/v3/login") { writer, first in
            writer.key("type", first: &first)
            writer.string("m.login.password")
            writer.key("identifier", first: &first)
            writer.raw(#"{"type":"m.id.user","user":"#)
            writer.string(user)
            writer.raw("}")
            writer.key("password", first: &first)
            writer.string(password)
            writer.key("device_id", first: &first)
            writer.string(settings.deviceID)
            writer.key("initial_device_display_name", first: &first)
            writer.string("SensorHub")
        }
        let token = Self.text("access_token", of: answer, what: what)
        if case .success(let token) = token {
            let user = Self.text("user_id", of: answer, what: what)
            session.withLock { session in
                session.token = token
                if case .success(let user) = user { session.user = user }
            }
        }
        return token
    }

    /// The room's id: as configured (`!…`), or its alias (`#…`) resolved once.
    func roomID(token: String) async -> Result<String, Failure> {
        if settings.room.hasPrefix("!") { return .success(settings.room) }
        if let room = session.withLock({ $0.room }) { return .success(room) }
        let what = "Matrix at \(settings.host) resolving \(settings.room)"
        let url = settings.homeserver + "/_matrix/client/v3/directory/room/" + WebText.percentEncoded(settings.room)
        let answer: Result<HTTPDelivery.Answer, any Error>
        do {
            answer = .success(try await http.request(.GET, url, headers: Self.authorization(token), body: nil))
        } catch {
            answer = .failure(error)
        }
        let room = Self.text("room_id", of: answer, what: what)
        if case .success(let room) = room { session.withLock { $0.room = room } }
        return room
    }

    /// The text `member` of a 200 answer's JSON; else why not, as the attempt's result.
    static func text(
        _ member: String, of answer: Result<HTTPDelivery.Answer, any Error>, what: String
    ) -> Result<String, Failure> {
        guard case .success(let reply) = answer, reply.status == 200 else {
            return .failure(Failure(result: result(answer, what: what)))
        }
        guard case .string(let text)? = (try? JSONTree.parse(Array(reply.body.utf8)))?[member] else {
            return .failure(Failure(result: .retry(reason: "\(what): the answer has no \(member)")))
        }
        return .success(text)
    }

    /// By status, as every HTTP backend, said with Matrix' own `errcode` and `error` (`M_UNKNOWN_TOKEN`,
    /// `M_FORBIDDEN`); a 429 waits its `retry_after_ms` when there is no `Retry-After`.
    static func result(_ answer: Result<HTTPDelivery.Answer, any Error>, what: String) -> DeliveryResult {
        switch answer {
        case .failure(let error):
            return HTTPDelivery.result(error, what: what)
        case .success(let answer):
            let body = try? JSONTree.parse(Array(answer.body.utf8))
            var reason = "\(what) answered HTTP \(answer.status)"
            if case .string(let code)? = body?["errcode"] { reason += " " + Template.clip(code, 60) }
            if case .string(let error)? = body?["error"] { reason += ": " + Template.clip(error, 200) }
            if answer.status == 429, answer.headers.first(name: "Retry-After") == nil,
                case .number(let milliseconds, _)? = body?["retry_after_ms"], milliseconds.isFinite,
                (0..<86_400_000).contains(milliseconds)
            {
                return .retry(reason: reason, after: .milliseconds(Int64(milliseconds)))
            }
            switch HTTPDelivery.result(answer, what: what) {
            case .failed: return .failed(reason: reason)
            case .retry(_, let after): return .retry(reason: reason, after: after)
            case let other: return other
            }
        }
    }
}

extension MatrixNotifier {
    struct Settings: BackendSettings {
        static let type = "matrix"
        static let linksInText = true
        static let summary =
            "A message in a Matrix room, from an account of the hub's; alerts are acknowledged with a reaction."
        static let keys = [
            ConfigKey(
                "homeserver", "URL",
                "Required. The account's homeserver (`https://matrix.example.org`)."),
            ConfigKey(
                "room", "text",
                "Required. The room: its id (`!abc:example.org`) or an alias (`\"#home:example.org\"`, quoted: YAML"
                    + " takes # for a comment), which is resolved once. The account must have joined it."),
            ConfigKey(
                "token", "text", secret: true,
                "The account's access token; better `token_file`. Give either this or `user` and `password`."),
            ConfigKey(
                "user", "text",
                "The account's user id (`@hub:example.org`) or name, to log in with `password`."),
            ConfigKey(
                "password", "text", secret: true,
                "The password of `user`; better `password_file`. hubd logs in once, and again when its token is"
                    + " logged out."),
            ConfigKey(
                "device_id", "text", default: "SENSORHUB",
                "The device id hubd logs in as with `user` and `password`: letters, digits and _."),
            ConfigKey(
                "msgtype", "one of: notice, text", default: "notice",
                "Send `m.notice` messages (what bots send, and what other bots don't answer) or `m.text`."),
            .caFile(for: "the homeserver"),
        ]
        var homeserver: String
        var host: String
        /// `!id:server` or `#alias:server`.
        var room: String
        var token: String?
        var user: String?
        var password: String?
        var deviceID: String
        /// `m.notice` (the default: what the spec asks of bots, and what other bots don't answer) or `m.text`.
        var messageType: String
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            homeserver = try node["homeserver"].required { try $0.url() }
            while homeserver.hasSuffix("/") { homeserver.removeLast() }
            host = URL(string: homeserver)?.host ?? homeserver
            room = try node["room"].required { node in
                try node.value("a room id (!abc:example.org) or alias (#home:example.org)") { text in
                    text.range(of: #"^[!#][^:\s/]+:[A-Za-z0-9.\-\[\]:]+$"#, options: .regularExpression) != nil
                        ? text : nil
                }
            }
            token = try node.secret("token")
            user = try node["user"].value("a user id (@hub:example.org) or name") { text in
                text.range(of: #"^@?[a-z0-9._=/+\-]+(:[A-Za-z0-9.\-\[\]:]+)?$"#, options: .regularExpression) != nil
                    ? text : nil
            }
            password = try node.secret("password")
            switch (token?.isEmpty == false, user != nil && password?.isEmpty == false) {
            case (true, false): break
            case (false, true): break
            case (true, true): throw node.invalid("give either token or user and password, not both")
            case (false, false):
                throw node.invalid(
                    "a matrix backend needs an access token (token_file) or a user and password (password_file)")
            }
            if let token, UnsafeText.problem(in: token) != nil || token.contains(" ") {
                throw node.secretSource("token").invalidValue(
                    "…", "an access token is one word of printable characters")
            }
            deviceID =
                try node["device_id"].value("letters, digits and _ (a Matrix device id)") { text in
                    text.range(of: #"^[A-Za-z0-9_]{1,64}$"#, options: .regularExpression) != nil ? text : nil
                } ?? "SENSORHUB"
            messageType =
                try node["msgtype"].value("notice or text") { text in
                    ["notice": "m.notice", "m.notice": "m.notice", "text": "m.text", "m.text": "m.text"][text]
                } ?? "m.notice"
            caFile = try node["ca_file"].filePath()
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            MatrixNotifier(settings: self, http: try context.http(caFile: caFile))
        }
    }
}
