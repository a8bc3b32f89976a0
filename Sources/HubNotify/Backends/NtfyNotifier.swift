import Foundation
import HubCore
import NIOHTTP1

/// `ntfy`: POSTs the message to `<server>/<topic>` with ntfy's headers.
struct NtfyNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery

    func send(_ notification: Notification) async -> DeliveryResult {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "X-Title", value: headerValue(notification.title, limit: 250))
        headers.add(name: "X-Priority", value: String(settings.priority ?? notification.priority))
        if !settings.tags.isEmpty {
            headers.add(name: "X-Tags", value: headerValue(settings.tags.joined(separator: ",")))
        }
        if let click = settings.click { headers.add(name: "X-Click", value: headerValue(click)) }
        if let token = settings.token { headers.add(name: "Authorization", value: "Bearer " + token) }
        if let alert = notification.alert, alert.reason == .acknowledged {
            // Acknowledged elsewhere: the group's notification is marked read and dismissed on every phone.
            let url = settings.url + "/" + alert.replaceHandle + "/clear"
            var headers = HTTPHeaders()
            if let token = settings.token { headers.add(name: "Authorization", value: "Bearer " + token) }
            do {
                let answer = try await http.request(.PUT, url, headers: headers, body: nil)
                return HTTPDelivery.result(answer, what: url)
            } catch {
                return HTTPDelivery.result(error, what: url)
            }
        }
        if let alert = notification.alert {
            // A later message of the same group replaces this one on the phone (ntfy 2.16 and later).
            headers.add(name: "X-Sequence-ID", value: alert.replaceHandle)
            // Buttons the phone POSTs to the hub, clearing the notification (ntfy's `http` action).
            let actions = alert.actions.compactMap { action in
                action.url.map { "http, \(action.title), \($0), method=POST, clear=true" }
            }
            if !actions.isEmpty { headers.add(name: "X-Actions", value: actions.joined(separator: "; ")) }
        }
        do {
            let answer = try await http.post(settings.url, headers: headers, body: Array(notification.body.utf8))
            return HTTPDelivery.result(answer, what: settings.url)
        } catch {
            return HTTPDelivery.result(error, what: settings.url)
        }
    }
}

extension NtfyNotifier {
    struct Settings: BackendSettings {
        static let type = "ntfy"
        static let takesBack = true
        static let summary = "A push to phones through an ntfy server (ntfy.sh or your own)."
        static let keys = [
            ConfigKey(
                "url", "URL", default: "https://ntfy.sh",
                "The ntfy server; without `topic`, the URL of the topic itself (`https://ntfy.sh/my-house`)."),
            ConfigKey(
                "topic", "text",
                "The topic to publish to, 1–64 letters, digits, - or _, added to `url`."),
            ConfigKey(
                "token", "text", secret: true,
                "An ntfy access token (`tk_…`) for a protected topic, sent as `Authorization: Bearer`."),
            ConfigKey(
                "priority", "1–5 or min, low, default, high, urgent",
                "A priority for every message of this backend, in place of the rule's."),
            ConfigKey(
                "tags", "list of texts",
                "ntfy tags for every message (`[house]`), sent as `X-Tags`."),
            ConfigKey(
                "click", "URL",
                "What the phone opens when the notification is tapped, sent as `X-Click`."),
            .caFile(for: "the server"),
        ]
        var url: String
        var token: String?
        /// Overrides the rule's priority when set.
        var priority: Int?
        var tags: [String]
        var click: String?
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            url = try node["url"].url() ?? "https://ntfy.sh"
            if let topic = try node["topic"].value(
                "1–64 letters, digits, - or _ (an ntfy topic)",
                { $0.range(of: #"^[A-Za-z0-9_-]{1,64}$"#, options: .regularExpression) != nil ? $0 : nil })
            {
                url = url.hasSuffix("/") ? url + topic : url + "/" + topic
            }
            token = try node.secret("token")
            priority = try node["priority"].priority()
            tags = try node["tags"].strings() ?? []
            click = try node["click"].string()
            caFile = try node["ca_file"].filePath()
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            NtfyNotifier(settings: self, http: try context.http(caFile: caFile))
        }
    }
}
