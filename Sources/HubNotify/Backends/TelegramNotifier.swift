import Foundation
import HubCore
import NIOHTTP1

/// `telegram`: the Bot API's `sendMessage` to one chat. Telegram answers a flood with 429 and
/// `parameters.retry_after` (seconds) in its JSON body: the queue waits that long before the next attempt.
///
/// A later message of an alert group whose message this process sent edits that message (`editMessageText`, with
/// the new buttons) rather than sending another, as `GroupMessages` decides; an edit Telegram refuses (the message was
/// deleted, or can no longer be edited) is sent as a new message in the same attempt.
struct TelegramNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery
    /// The message_id of each alert group's message, for the edits (this process only).
    let groups = GroupMessages<Int>()

    func send(_ notification: Notification) async -> DeliveryResult {
        // The token is part of the URL, so it never appears in what a failure says.
        let base = settings.url + "/bot" + settings.token
        if notification.alert?.reason == .acknowledged {
            return await takeButtonsOff(notification, base: base)
        }
        if let messageID = groups.target(of: notification) {
            let what = settings.url + "/bot…/editMessageText"
            let answer = await http.postJSON(base + "/editMessageText") { writer, first in
                writer.key("chat_id", first: &first)
                writer.string(settings.chat)
                writer.key("message_id", first: &first)
                writer.number(messageID)
                writer.key("text", first: &first)
                writer.string(notification.title + "\n" + notification.body)
                // Always a keyboard: none (an empty one) takes the old buttons off.
                writer.key("reply_markup", first: &first)
                Self.keyboard(notification.alert?.actions ?? [], into: &writer)
            }
            if case .success(let reply) = answer, reply.status == 400,
                reply.body.contains("message is not modified")
            {
                // The same text again: an earlier attempt made this edit and its answer was lost.
                groups.edited(messageID, for: notification)
                return .delivered
            }
            switch Self.result(answer, what: what) {
            case .delivered:
                groups.edited(messageID, for: notification)
                return .delivered
            case .failed:
                // Deleted, or no longer editable: tell it in a new message.
                groups.forget(notification)
            case let result:
                return result
            }
        }
        let what = settings.url + "/bot…/sendMessage"
        let answer = await http.postJSON(base + "/sendMessage") { writer, first in
            writer.key("chat_id", first: &first)
            writer.string(settings.chat)
            writer.key("text", first: &first)
            // Plain text (no parse_mode): a status can hold anything, and nothing in it is markup.
            writer.string(notification.title + "\n" + notification.body)
            writer.key("disable_notification", first: &first)
            writer.bool(notification.priority <= 2)
            // An alert's buttons: the hub fetches the presses (`listen`), so they work behind NAT.
            if let actions = notification.alert?.actions, !actions.isEmpty {
                writer.key("reply_markup", first: &first)
                Self.keyboard(actions, into: &writer)
            }
        }
        let result = Self.result(answer, what: what)
        if case .delivered = result, case .success(let reply) = answer,
            case .number(let id, _)? = (try? JSONTree.parse(Array(reply.body.utf8)))?["result"]?["message_id"],
            id.isFinite, abs(id) < 1e15
        {
            groups.sent(Int(id), for: notification)
        }
        return result
    }

    /// Everything in the group was acknowledged (from another phone, `hubctl`, a link): the buttons come off the
    /// group's message, as they do off one whose button was pressed. Nothing to do for a message this process did
    /// not send (after a restart): its buttons then answer that the alert is acknowledged already.
    private func takeButtonsOff(_ notification: Notification, base: String) async -> DeliveryResult {
        guard let messageID = groups.message(of: notification) else { return .delivered }
        let answer = await removeButtons(base: base, chat: .string(settings.chat), message: messageID)
        // Already without buttons (the press itself took them off), or gone: nothing left to take back.
        if case .success(let reply) = answer, reply.status == 400 { return .delivered }
        return Self.result(answer, what: settings.url + "/bot…/editMessageReplyMarkup")
    }

    /// `editMessageReplyMarkup` with no keyboard: the buttons come off message `message` in `chat` (a number or a
    /// name, as Telegram gave it).
    func removeButtons(base: String, chat: JSONTree, message: Int) async -> Result<HTTPDelivery.Answer, any Error> {
        await http.postJSON(base + "/editMessageReplyMarkup") { writer, first in
            writer.key("chat_id", first: &first)
            if case .number(let number, _) = chat, number.isFinite, abs(number) < 1e15 {
                writer.number(Int(number))
            } else if case .string(let text) = chat {
                writer.string(text)
            }
            writer.key("message_id", first: &first)
            writer.number(message)
            writer.key("reply_markup", first: &first)
            Self.keyboard([], into: &writer)
        }
    }

    /// One row of inline buttons, each with its token as `callback_data`: `{"inline_keyboard":[[…]]}`
    /// (`{"inline_keyboard":[]}` for none).
    static func keyboard(_ actions: [Notification.AlertContext.Action], into writer: inout JSONWriter) {
        guard !actions.isEmpty else { return writer.raw("{\"inline_keyboard\":[]}") }
        writer.raw("{\"inline_keyboard\":[[")
        for (index, action) in actions.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw("{\"text\":")
            writer.string(action.title)
            writer.raw(",\"callback_data\":")
            writer.string(callbackPrefix + action.token)
            writer.raw("}")
        }
        writer.raw("]]}")
    }

    /// As every HTTP backend, with a 429 waiting its `parameters.retry_after`.
    static func result(_ answer: Result<HTTPDelivery.Answer, any Error>, what: String) -> DeliveryResult {
        switch answer {
        case .success(let answer):
            if answer.status == 429, let seconds = retryAfter(answer.body) {
                return .retry(reason: "\(what) answered HTTP 429 (too many requests)", after: .seconds(seconds))
            }
            return HTTPDelivery.result(answer, what: what)
        case .failure(let error):
            return HTTPDelivery.result(error, what: what)
        }
    }

    /// `{"ok":false,"error_code":429,"parameters":{"retry_after":7}}` → 7.
    static func retryAfter(_ body: String) -> Int? {
        guard case .number(let seconds, _)? = (try? JSONTree.parse(Array(body.utf8)))?["parameters"]?["retry_after"],
            seconds.isFinite, seconds >= 0, seconds < 86_400
        else { return nil }
        return Int(seconds)
    }
}

extension TelegramNotifier {
    struct Settings: BackendSettings {
        static let type = "telegram"
        static let takesBack = true
        static let summary =
            "A message from a Telegram bot to a chat or channel, with Acknowledge and Snooze buttons on alerts."
        static let keys = [
            ConfigKey(
                "token", "text", secret: true,
                "Required. The bot's token from BotFather (`123456789:AA…`); better `token_file`. It is never shown in"
                    + " a message or log line."),
            ConfigKey(
                "chat_id", "text",
                "Required. The chat to send to: its id (`\"-1001234567890\"`) or a channel's `@name`."),
            ConfigKey(
                "url", "URL", default: "https://api.telegram.org",
                "The Bot API server (a local Bot API server of your own)."),
            .caFile(for: "the Bot API server"),
        ]
        /// The bot's token (from BotFather), kept out of logs and messages.
        var token: String
        /// A chat id (`-1001234567890`) or a channel's `@name`.
        var chat: String
        /// The Bot API's address (a local Bot API server, or a test's).
        var url: String
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            guard let token = try node.secret("token"), !token.isEmpty else {
                throw node.invalid("a telegram backend needs its bot token: token_file (or token, or HUB_…_TOKEN)")
            }
            guard token.range(of: #"^[0-9]+:[A-Za-z0-9_-]+$"#, options: .regularExpression) != nil else {
                throw node.secretSource("token").invalidValue(
                    "…", "a bot token looks like 123456789:AA… (from BotFather)")
            }
            self.token = token
            chat = try node["chat_id"].required { node in
                try node.value("a chat id (-1001234567890) or @channel") { text in
                    text.range(of: #"^(-?[0-9]+|@[A-Za-z][A-Za-z0-9_]{4,31})$"#, options: .regularExpression) != nil
                        ? text : nil
                }
            }
            url = try node["url"].url() ?? "https://api.telegram.org"
            while url.hasSuffix("/") { url.removeLast() }
            caFile = try node["ca_file"].filePath()
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            TelegramNotifier(settings: self, http: try context.http(caFile: caFile))
        }
    }
}
