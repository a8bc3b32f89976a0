import Foundation
import HubCore
import NIOHTTP1

/// `telegram`: the Bot API's `sendMessage` to one chat. Telegram answers a flood with 429 and
/// `parameters.retry_after` (seconds) in its JSON body: the queue waits that long before the next attempt.
struct TelegramNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery

    func send(_ notification: Notification) async -> DeliveryResult {
        // The token is part of the URL, so it never appears in what a failure says.
        let url = settings.url + "/bot" + settings.token + "/sendMessage"
        let what = settings.url + "/bot…/sendMessage"
        let answer = await http.postJSON(url) { writer, first in
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
                writer.raw("{\"inline_keyboard\":[[")
                for (index, action) in actions.enumerated() {
                    if index > 0 { writer.raw(",") }
                    writer.raw("{\"text\":")
                    writer.string(action.title)
                    writer.raw(",\"callback_data\":")
                    writer.string(Self.callbackPrefix + action.token)
                    writer.raw("}")
                }
                writer.raw("]]}")
            }
        }
        switch answer {
        case .success(let answer):
            if answer.status == 429, let seconds = Self.retryAfter(answer.body) {
                return .retry(reason: "\(what) answered HTTP 429 (too many requests)", after: .seconds(seconds))
            }
            return HTTPDelivery.result(answer, what: what)
        case .failure(let error):
            return HTTPDelivery.result(error, what: what)
        }
    }

    /// `{"ok":false,"error_code":429,"parameters":{"retry_after":7}}` → 7.
    static func retryAfter(_ body: String) -> Int? {
        guard case .number(let seconds)? = (try? JSONTree.parse(Array(body.utf8)))?["parameters"]?["retry_after"],
            seconds.isFinite, seconds >= 0, seconds < 86_400
        else { return nil }
        return Int(seconds)
    }
}

extension TelegramNotifier {
    struct Settings: BackendSettings {
        static let type = "telegram"
        static let keys = ["chat_id", "url", "ca_file"]
        static let secrets = ["token"]
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
                throw node["token"].invalidValue("…", "a bot token looks like 123456789:AA… (from BotFather)")
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
