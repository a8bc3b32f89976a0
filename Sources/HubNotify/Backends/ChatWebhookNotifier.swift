import Foundation
import HubCore
import NIOHTTP1

/// `discord` and `slack`: their incoming webhooks, one message each. The webhook's URL holds its secret, so it comes
/// from `webhook_url_file` (or the environment) and only its host is ever shown. Text that would mention everyone
/// (`@everyone`, `<!channel>`) or be markup stays plain: Discord is told to parse no mentions, Slack's control
/// characters `&`, `<`, `>` are escaped as its formatting rules say.
struct ChatWebhookNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery

    func send(_ notification: Notification) async -> DeliveryResult {
        let text = notification.title + "\n" + notification.body
        let answer = await http.postJSON(settings.url) { writer, first in
            switch settings.service {
            case .discord:
                writer.key("content", first: &first)
                writer.string(String(text.prefix(2000)))
                writer.key("allowed_mentions", first: &first)
                writer.raw(#"{"parse":[]}"#)
            case .slack:
                writer.key("text", first: &first)
                writer.string(Self.slackEscaped(text))
            }
        }
        let what = settings.service.rawValue + " webhook at " + settings.host
        switch answer {
        case .success(let answer):
            // Discord's 429 says how long in its body (seconds, fractional) as well as in Retry-After.
            if answer.status == 429, settings.service == .discord, answer.headers.first(name: "Retry-After") == nil,
                case .number(let seconds, _)? = (try? JSONTree.parse(Array(answer.body.utf8)))?["retry_after"],
                seconds.isFinite, seconds >= 0, seconds < 86_400
            {
                return .retry(reason: "\(what) answered HTTP 429", after: .milliseconds(Int64(seconds * 1000)))
            }
            return HTTPDelivery.result(answer, what: what)
        case .failure(let error):
            return HTTPDelivery.result(error, what: what)
        }
    }

    /// Slack's formatting escapes: its only control characters.
    static func slackEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension ChatWebhookNotifier {
    enum Service: String, Sendable {
        case discord, slack
    }

    /// A service as a type, so that each has settings of its own in the backend list.
    protocol Kind: Sendable { static var service: Service { get } }
    enum Discord: Kind { static let service = Service.discord }
    enum Slack: Kind { static let service = Service.slack }

    /// `type: discord` or `type: slack`.
    struct ServiceSettings<K: Kind>: BackendSettings {
        static var type: String { K.service.rawValue }
        static var linksInText: Bool { true }
        static var summary: String {
            switch K.service {
            case .discord: "A message to a Discord channel through its incoming webhook; mentions in it do not ping."
            case .slack: "A message to a Slack channel through its incoming webhook, with Slack's markup escaped."
            }
        }
        static var keys: [ConfigKey] {
            let name = K.service == .discord ? "Discord" : "Slack"
            return [
                ConfigKey(
                    "webhook_url", "URL", secret: true,
                    "Required. The incoming webhook's URL, which is its secret: better `webhook_url_file`. Messages"
                        + " show only its host."),
                .caFile(for: "\(name)'s server"),
            ]
        }
        let settings: Settings

        init(_ node: ConfigNode) throws(ConfigurationError) { settings = try Settings(node, service: K.service) }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            ChatWebhookNotifier(settings: settings, http: try context.http(caFile: settings.caFile))
        }
    }

    struct Settings: Sendable {
        var service: Service
        /// The webhook's URL, a secret in itself.
        var url: String
        /// What messages show of it.
        var host: String
        var caFile: String?

        init(_ node: ConfigNode, service: Service) throws(ConfigurationError) {
            self.service = service
            guard let url = try node.secret("webhook_url"), !url.isEmpty else {
                throw node.invalid(
                    "a \(service.rawValue) backend needs its webhook's URL: webhook_url_file (the URL is its secret)")
            }
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""),
                let host = parsed.host, url.allSatisfy({ !$0.isNewline && $0 != " " })
            else {
                throw node.secretSource("webhook_url").invalidValue("…", "an https:// (or http://) URL, the webhook's")
            }
            self.url = url
            self.host = host + (parsed.port.map { ":\($0)" } ?? "")
            caFile = try node["ca_file"].filePath()
        }
    }
}
