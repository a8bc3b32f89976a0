import Foundation
import HubCore
import HubSupport
import NIOHTTP1

/// `gotify`: POSTs `{title, message, priority}` to `<server>/message` with the application's token in
/// `X-Gotify-Key` (never in the URL, where proxies log it).
struct GotifyNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery

    func send(_ notification: Notification) async -> DeliveryResult {
        var headers = HTTPHeaders()
        headers.add(name: "X-Gotify-Key", value: settings.token)
        let url = settings.url + "/message"
        let answer = await http.postJSON(url, headers: headers) { writer, first in
            writer.key("title", first: &first)
            writer.string(notification.title)
            writer.key("message", first: &first)
            writer.string(notification.body)
            writer.key("priority", first: &first)
            writer.number(settings.priority ?? Self.priority(notification.priority))
        }
        switch answer {
        case .success(let answer): return HTTPDelivery.result(answer, what: url)
        case .failure(let error): return HTTPDelivery.result(error, what: url)
        }
    }

    /// The hub's 1 (min) to 5 (urgent) on Gotify's 0–10, where its Android app makes 8 and above a heads-up, 4–7 a
    /// sound, 1–3 silent.
    static func priority(_ hub: Int) -> Int { [1: 1, 2: 3, 3: 5, 4: 8, 5: 10][hub] ?? 5 }
}

extension GotifyNotifier {
    struct Settings: BackendSettings {
        static let type = "gotify"
        static let linksInText = true
        static let summary = "A message to a Gotify server of your own, which pushes it to its apps."
        static let keys = [
            ConfigKey(
                "url", "URL",
                "Required. The Gotify server (`https://gotify.example.org`); messages go to `<url>/message`."),
            ConfigKey(
                "token", "text", secret: true,
                "Required. The application's token (Gotify: Apps → Create application), sent as `X-Gotify-Key`;"
                    + " better `token_file`."),
            ConfigKey(
                "priority", "integer 0–10",
                "Gotify's own priority for every message; without it, the rule's 1–5 as Gotify's 1, 3, 5, 8, 10."),
            .caFile(for: "the server"),
        ]
        var url: String
        /// The application's token (Gotify: Apps → create).
        var token: String
        /// Gotify's own 0–10, overriding the rule's.
        var priority: Int?
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            url = try node["url"].required { try $0.url() }
            while url.hasSuffix("/") { url.removeLast() }
            guard let token = try node.secret("token"), !token.isEmpty else {
                throw node.invalid("a gotify backend needs its application token: token_file (or token)")
            }
            if let problem = UnsafeText.problem(in: token) {
                throw node.secretSource("token").invalidValue("…", "it " + problem)
            }
            self.token = token
            priority = try node["priority"].integer(in: 0...10)
            caFile = try node["ca_file"].filePath()
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            GotifyNotifier(settings: self, http: try context.http(caFile: caFile))
        }
    }
}
