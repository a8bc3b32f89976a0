import Foundation
import HubCore

/// `pushover`: `POST /1/messages.json` as a form (`token`, `user`, `message`, `title`, `priority`…). Pushover
/// answers `{"status":1}`; a 4xx says why in `errors` and is permanent (a wrong user key stays wrong), 429 (the
/// application's monthly limit) and 5xx are retried.
///
/// The hub's priorities 1–5 are Pushover's -2 (no alert) to 2 (emergency: repeated every `emergency_retry` until
/// acknowledged or `emergency_expire` has passed, the two parameters Pushover requires for it). An emergency
/// message about an alert keeps its receipt (`PushoverReceipts`): acknowledged in the app, it acknowledges the
/// alert; acknowledged elsewhere, its retries are cancelled.
struct PushoverNotifier: HTTPBacked {
    let settings: Settings
    let http: HTTPDelivery
    let receipts: PushoverReceipts

    func send(_ notification: Notification) async -> DeliveryResult {
        if notification.alert?.reason == .acknowledged { return await cancelRetries(notification) }
        let priority = settings.priority ?? Self.priority(notification.priority)
        // Pushover's limits: a title of 250 characters, a message of 1024.
        var fields = [
            ("token", settings.token), ("user", settings.user),
            ("title", Template.clip(notification.title, 250)),
            ("message", Template.clip(notification.body.isEmpty ? notification.title : notification.body, 1024)),
            ("priority", String(priority)),
        ]
        if priority == 2 {
            fields += [
                ("retry", String(Int(settings.emergencyRetry.seconds))),
                ("expire", String(Int(settings.emergencyExpire.seconds))),
            ]
        }
        if let acknowledge = notification.alert?.actions.first?.url {
            // The link to acknowledge the alert, under the message; an emergency's acknowledgement in the app is
            // POSTed to it by Pushover itself (`callback`), which stops the hub's reminders too.
            fields += [("url", acknowledge), ("url_title", "Acknowledge")]
            if priority == 2 { fields.append(("callback", acknowledge)) }
        }
        if let device = settings.device { fields.append(("device", device)) }
        if let sound = settings.sound { fields.append(("sound", sound)) }
        let what = "Pushover at " + settings.host
        switch await http.postForm(settings.url + "/1/messages.json", fields: fields) {
        case .success(let answer):
            if (400..<500).contains(answer.status), answer.status != 429, let errors = Self.errors(answer.body) {
                return .failed(reason: "\(what) answered HTTP \(answer.status): \(errors)")
            }
            if priority == 2, answer.status == 200, let alert = notification.alert,
                case .string(let receipt)? = (try? JSONTree.parse(Array(answer.body.utf8)))?["receipt"]
            {
                receipts.add(
                    .init(
                        receipt: receipt, group: alert.replaceHandle, token: alert.actions.first?.token,
                        polled: alert.actions.first?.url == nil,
                        until: Timestamp.now.adding(
                            milliseconds: Int64(settings.emergencyExpire.components.seconds + 60) * 1000)))
            }
            return HTTPDelivery.result(answer, what: what)
        case .failure(let error):
            return HTTPDelivery.result(error, what: what)
        }
    }

    /// The hub's 1 (min) to 5 (urgent) on Pushover's -2 (lowest, no alert) to 2 (emergency).
    static func priority(_ hub: Int) -> Int { min(2, max(-2, hub - 3)) }

    /// `{"user":"invalid","errors":["user identifier is invalid"],"status":0}` → "user identifier is invalid".
    static func errors(_ body: String) -> String? {
        guard case .array(let errors)? = (try? JSONTree.parse(Array(body.utf8)))?["errors"] else { return nil }
        let texts = errors.compactMap { error -> String? in
            if case .string(let text) = error { return Template.clip(text, 200) }
            return nil
        }
        return texts.isEmpty ? nil : texts.joined(separator: "; ")
    }
}

extension PushoverNotifier {
    struct Settings: BackendSettings {
        static let type = "pushover"
        static let linksInText = true
        static let takesBack = true
        static let summary =
            "A push to phones through Pushover, where an urgent message is an emergency repeated until acknowledged."
        static let keys = [
            ConfigKey(
                "token", "text", secret: true,
                "Required. The application's API token (Pushover: Your Applications), 30 letters and digits; better"
                    + " `token_file`."),
            ConfigKey(
                "user", "text", secret: true,
                "Required. Your user key (on Pushover's dashboard) or a group's, 30 letters and digits; better"
                    + " `user_file`."),
            ConfigKey(
                "device", "text",
                "The device to send to, or several separated by commas (letters, digits, _ and -, up to 25 each);"
                    + " all of the user's devices when left out."),
            ConfigKey(
                "sound", "text",
                "A Pushover sound's name (`pushover`, `bike`, `siren`, `none`…); Pushover's default when left out."),
            ConfigKey(
                "priority", "integer -2–2",
                "Pushover's own priority for every message (2: an emergency); without it, the rule's 1–5 as -2 … 2."),
            ConfigKey(
                "emergency_retry", "duration 30s–3h", default: "1m",
                "How often Pushover repeats an emergency until it is acknowledged."),
            ConfigKey(
                "emergency_expire", "duration 30s–3h", default: "1h",
                "How long Pushover keeps repeating an emergency nobody acknowledged."),
            ConfigKey(
                "url", "URL", default: "https://api.pushover.net",
                "Pushover's API server (or a test one)."),
            .caFile(for: "the server"),
        ]
        /// The application's API token.
        var token: String
        /// The user's (or group's) key.
        var user: String
        var device: String?
        var sound: String?
        /// Pushover's own -2…2, overriding the rule's.
        var priority: Int?
        var emergencyRetry: Duration
        var emergencyExpire: Duration
        var url: String
        var host: String
        var caFile: String?

        init(_ node: ConfigNode) throws(ConfigurationError) {
            token = try Self.key(node, "token", what: "the application's API token (Pushover: Your Applications)")
            user = try Self.key(node, "user", what: "your user key (on Pushover's dashboard) or a group's")
            device = try node["device"].value("a device name: letters, digits, _ and -, up to 25") { text in
                text.range(of: #"^[A-Za-z0-9_-]{1,25}(,[A-Za-z0-9_-]{1,25})*$"#, options: .regularExpression) != nil
                    ? text : nil
            }
            sound = try node["sound"].value("a sound's name (pushover, bike, siren, none…)") { text in
                text.range(of: #"^[a-z0-9_-]{1,32}$"#, options: .regularExpression) != nil ? text : nil
            }
            priority = try node["priority"].integer(in: -2...2)
            // Pushover's own bounds: a retry every 30 s at the most, an expiry of 3 h at the most.
            emergencyRetry = try node["emergency_retry"].duration(in: .seconds(30)...(.seconds(10_800))) ?? .seconds(60)
            emergencyExpire =
                try node["emergency_expire"].duration(in: .seconds(30)...(.seconds(10_800))) ?? .seconds(3600)
            url = try node["url"].url() ?? "https://api.pushover.net"
            while url.hasSuffix("/") { url.removeLast() }
            host = URL(string: url)?.host ?? url
            caFile = try node["ca_file"].filePath()
        }

        /// A token or user key: 30 letters and digits, as Pushover makes them.
        private static func key(_ node: ConfigNode, _ key: String, what: String) throws(ConfigurationError) -> String {
            guard let value = try node.secret(key), !value.isEmpty else {
                throw node.invalid("a pushover backend needs \(what): \(key)_file (or \(key))")
            }
            guard value.range(of: #"^[A-Za-z0-9]{30}$"#, options: .regularExpression) != nil else {
                throw node.secretSource(key).invalidValue("…", "Pushover's keys are 30 letters and digits")
            }
            return value
        }

        func makeNotifier(_ context: BackendContext) throws(ConfigurationError) -> any Notifier {
            PushoverNotifier(
                settings: self, http: try context.http(caFile: caFile),
                receipts: PushoverReceipts(
                    directory: context.stateDirectory, backend: context.name, logger: context.logger))
        }
    }
}
