import Foundation
import HubCore
import Logging
import Yams

/// The `notifiers` section of hubd's configuration: the backends, and the rules that send events to them.
///
/// ```yaml
/// notifiers:
///   backends:
///     phone: { type: ntfy, url: "https://ntfy.sh", topic: my-house }
///     audit: { type: file, path: /var/lib/sensorhub/events.jsonl }
///   rules:
///     doors:
///       sensors: ["door*"]
///       events: [changed]
///       backends: [phone, audit]
///       title: "{sensor} is {new}"
///       rate_limit: 20m
/// ```
/// Rules are a mapping by name, like backends (a YAML list of mappings is more than hubd's configuration reader
/// accepts). Without a `notifiers` section no notifications are sent: events are only in hubd's log. Unknown keys are errors (a typo must not
/// silently switch a notification off).
public struct NotifierConfiguration: Sendable {
    public var backends: [BackendSpec]
    public var rules: [NotificationRule]

    public init(backends: [BackendSpec], rules: [NotificationRule]) {
        self.backends = backends
        self.rules = rules
    }

    /// No backends, no rules: what a hub without a `notifiers` section does.
    public static let `default` = NotifierConfiguration(backends: [], rules: [])

    /// Reads the `notifiers` section of the YAML file at `path`; the default when there is none.
    public static func load(path: String?) throws(NotifierConfigurationError) -> NotifierConfiguration {
        guard let path else { return .default }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .unreadable(path: path)
        }
        return try parse(text, file: path)
    }

    /// Reads the `notifiers` section of `text`; relative file names are taken from `file`'s directory.
    public static func parse(_ text: String, file: String? = nil) throws(NotifierConfigurationError)
        -> NotifierConfiguration
    {
        let root: Any?
        do {
            root = try Yams.load(yaml: text)
        } catch {
            throw .invalid(key: "notifiers", reason: "not valid YAML: \(error)")
        }
        guard let section = (root as? [String: Any])?["notifiers"], !(section is NSNull) else { return .default }
        let base = file.map { ($0 as NSString).deletingLastPathComponent } ?? FileManager.default.currentDirectoryPath
        let node = Node(value: section, path: "notifiers", base: base)
        try node.allow(["backends", "rules"])
        var backends: [BackendSpec] = []
        for (name, backend) in try node.child("backends")?.map() ?? [] {
            guard name.range(of: #"^[A-Za-z0-9_-]{1,64}$"#, options: .regularExpression) != nil else {
                throw .invalid(key: backend.path, reason: "a backend name is 1–64 letters, digits, - or _")
            }
            backends.append(try BackendSpec(name: name, node: backend))
        }
        let names = Set(backends.map(\.name))
        var rules: [NotificationRule] = []
        for (name, rule) in try node.child("rules")?.map() ?? [] {
            rules.append(try parseRule(rule, name: name, backends: names))
        }
        return NotifierConfiguration(backends: backends, rules: rules)
    }

    static func parseRule(_ node: Node, name: String, backends: Set<String>) throws(NotifierConfigurationError)
        -> NotificationRule
    {
        try node.allow(["events", "sensors", "statuses", "backends", "title", "message", "priority", "rate_limit"])
        guard let backendNode = node.child("backends") else {
            throw .invalid(key: node.path + ".backends", reason: "say which backends this rule sends to")
        }
        let targets = try backendNode.strings()
        for target in targets where !backends.contains(target) {
            let known = backends.sorted().joined(separator: ", ")
            throw .invalid(
                key: backendNode.path,
                reason: "no backend is named '\(target)' (backends: \(known.isEmpty ? "none" : known))")
        }
        var rule = NotificationRule(name: name, backends: targets)
        if let events = node.child("events") {
            for kind in try events.strings() {
                let aliases = ["status": "changed", "change": "changed", "silence": "silent", "recovery": "recovered"]
                let kind = SensorEvent.Kind(rawValue: aliases[kind] ?? kind)
                guard SensorEvent.Kind.all.contains(kind), kind != .test else {
                    throw .invalid(
                        key: events.path,
                        reason: "'\(kind)' is not an event; use changed, silent, offline, recovered or air_quality")
                }
                rule.events.insert(kind)
            }
        }
        rule.sensors = try node.child("sensors")?.strings() ?? []
        rule.statuses = try node.child("statuses")?.strings() ?? []
        rule.title = try node.child("title")?.template()
        rule.body = try node.child("message")?.template()
        if let priority = node.child("priority") { rule.priority = try priority.priority() }
        rule.rateLimit = try node.child("rate_limit")?.duration()
        return rule
    }
}

/// One configured backend: its kind with its settings, and its queue's policy.
public struct BackendSpec: Sendable {
    public enum Kind: Sendable {
        case log(level: Logger.Level)
        case file(path: String, sync: Bool)
        case exec(command: [String])
        /// `batch` > 1: each request carries a JSON array of up to that many notifications (whatever is waiting).
        case webhook(url: String, headers: [String: String], secret: [UInt8]?, caFile: String?, batch: Int)
        case ntfy(url: String, token: String?, priority: Int?, tags: [String], click: String?, caFile: String?)
        case mqtt(topic: Template, qos: Int, retain: Bool)
        case apns(APNsSettings)
    }

    public struct APNsSettings: Sendable {
        public var server: String
        public var bundleID: String
        public var teamID: String
        public var keyID: String
        public var keyPEM: String
        public var expiration: Duration
        public var collapseID: Template?
        public var caFile: String?
    }

    public var name: String
    public var kind: Kind
    public var policy = DeliveryPolicy()

    public init(name: String, kind: Kind, policy: DeliveryPolicy = DeliveryPolicy()) {
        self.name = name
        self.kind = kind
        self.policy = policy
    }

    public var type: String {
        switch kind {
        case .log: "log"
        case .file: "file"
        case .exec: "exec"
        case .webhook: "webhook"
        case .ntfy: "ntfy"
        case .mqtt: "mqtt"
        case .apns: "apns"
        }
    }

    static let queueKeys = [
        "type", "queue_size", "overflow", "concurrency", "timeout", "retry_delay", "retry_max_delay", "max_age",
    ]

    init(name: String, node: Node) throws(NotifierConfigurationError) {
        self.name = name
        guard let typeNode = node.child("type") else {
            throw .invalid(
                key: node.path + ".type", reason: "say which kind: log, file, exec, webhook, ntfy, mqtt or apns")
        }
        let type = try typeNode.string()
        var policy = DeliveryPolicy()
        if let size = node.child("queue_size") { policy.capacity = try size.integer(in: 1...1_000_000) }
        if let overflow = node.child("overflow") {
            let text = try overflow.string()
            guard let value = DeliveryPolicy.Overflow(rawValue: text) else {
                throw .invalid(key: overflow.path, reason: "drop_oldest or drop_newest")
            }
            policy.overflow = value
        }
        if let concurrency = node.child("concurrency") { policy.concurrency = try concurrency.integer(in: 1...64) }
        if let timeout = node.child("timeout") { policy.timeout = try timeout.duration() }
        if let delay = node.child("retry_delay") { policy.initialDelay = try delay.duration() }
        if let delay = node.child("retry_max_delay") { policy.maximumDelay = try delay.duration() }
        if let age = node.child("max_age") { policy.maximumAge = try age.duration() }
        self.policy = policy

        switch type {
        case "log":
            try node.allow(Self.queueKeys + ["level"])
            let text = try node.child("level")?.string() ?? "notice"
            guard let level = Logger.Level(rawValue: text) else {
                throw .invalid(
                    key: node.path + ".level", reason: "trace, debug, info, notice, warning, error or critical")
            }
            kind = .log(level: level)
        case "file":
            try node.allow(Self.queueKeys + ["path", "fsync"])
            kind = .file(path: try node.required("path").filePath(), sync: try node.child("fsync")?.bool() ?? false)
        case "exec":
            try node.allow(Self.queueKeys + ["command"])
            let command = try node.required("command").strings()
            guard let first = command.first, !first.isEmpty else {
                throw .invalid(key: node.path + ".command", reason: "a list: the program, then its arguments")
            }
            kind = .exec(command: command)
        case "webhook":
            try node.allow(Self.queueKeys + ["url", "headers", "secret", "secret_file", "ca_file", "batch"])
            var headers: [String: String] = [:]
            for (key, value) in try node.child("headers")?.map() ?? [] {
                let text = try value.string()
                guard !key.isEmpty, !text.contains(where: { $0.isNewline }) else {
                    throw .invalid(key: value.path, reason: "a header is one line")
                }
                headers[key] = text
            }
            let secret = try node.secret("secret")
            kind = .webhook(
                url: try node.required("url").url(), headers: headers, secret: secret.map { Array($0.utf8) },
                caFile: try node.child("ca_file")?.filePath(),
                batch: try node.child("batch")?.integer(in: 1...1000) ?? 1)
        case "ntfy":
            try node.allow(
                Self.queueKeys + ["url", "topic", "token", "token_file", "priority", "tags", "click", "ca_file"])
            var url = try node.child("url")?.url() ?? "https://ntfy.sh"
            if let topic = node.child("topic") {
                let text = try topic.string()
                guard text.range(of: #"^[A-Za-z0-9_-]{1,64}$"#, options: .regularExpression) != nil else {
                    throw .invalid(key: topic.path, reason: "an ntfy topic is 1–64 letters, digits, - or _")
                }
                url = url.hasSuffix("/") ? url + text : url + "/" + text
            }
            kind = .ntfy(
                url: url, token: try node.secret("token"), priority: try node.child("priority")?.priority(),
                tags: try node.child("tags")?.strings() ?? [], click: try node.child("click")?.string(),
                caFile: try node.child("ca_file")?.filePath())
        case "mqtt":
            try node.allow(Self.queueKeys + ["topic", "qos", "retain"])
            let topic = try node.child("topic")?.template() ?? Template.literal("sensorhub/events/{sensor}")
            kind = .mqtt(
                topic: topic, qos: try node.child("qos")?.integer(in: 0...2) ?? 1,
                retain: try node.child("retain")?.bool() ?? false)
        case "apns":
            try node.allow(
                Self.queueKeys + [
                    "environment", "server", "bundle_id", "team_id", "key_id", "key_file", "expiration", "collapse_id",
                    "ca_file",
                ])
            let environment = try node.child("environment")?.string() ?? "production"
            let hosts = ["production": "https://api.push.apple.com", "sandbox": "https://api.sandbox.push.apple.com"]
            guard let host = hosts[environment] else {
                throw .invalid(key: node.path + ".environment", reason: "production or sandbox")
            }
            let keyNode = try node.required("key_file")
            let keyFile = try keyNode.filePath()
            guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
                throw .invalid(key: keyNode.path, reason: "cannot read \(keyFile) (the .p8 key from Apple)")
            }
            let keyID = try node.required("key_id").string()
            let teamID = try node.required("team_id").string()
            for (value, key) in [(keyID, "key_id"), (teamID, "team_id")]
            where value.range(of: #"^[A-Z0-9]{10}$"#, options: .regularExpression) == nil {
                throw .invalid(key: node.path + "." + key, reason: "10 capital letters or digits, as Apple shows it")
            }
            let settings = APNsSettings(
                server: try node.child("server")?.url() ?? host, bundleID: try node.required("bundle_id").string(),
                teamID: teamID, keyID: keyID, keyPEM: pem,
                expiration: try node.child("expiration")?.duration() ?? .seconds(86_400),
                collapseID: try node.child("collapse_id")?.template() ?? Template.literal("{sensor}"),
                caFile: try node.child("ca_file")?.filePath())
            do {
                _ = try APNsTokenSigner(keyID: keyID, teamID: teamID, pem: pem)
            } catch {
                throw .invalid(
                    key: keyNode.path, reason: "\(keyFile) is not a P-256 private key in PEM (.p8): \(error)")
            }
            kind = .apns(settings)
        default:
            throw .invalid(
                key: typeNode.path,
                reason: "'\(type)' is not a backend; use log, file, exec, webhook, ntfy, mqtt or apns")
        }
    }
}

/// Why the `notifiers` section can't be used; the message names the key.
public enum NotifierConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration file can't be read.
    case unreadable(path: String)
    /// A key has a value that can't work.
    case invalid(key: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path): return "cannot read the configuration \(path)"
        case .invalid(let key, let reason): return "\(key): \(reason)"
        }
    }
}

/// A value in the parsed YAML, with its path for messages.
struct Node {
    var value: Any
    var path: String
    var base: String

    func child(_ key: String) -> Node? {
        guard let map = value as? [String: Any], let child = map[key], !(child is NSNull) else { return nil }
        return Node(value: child, path: path + "." + key, base: base)
    }

    func required(_ key: String) throws(NotifierConfigurationError) -> Node {
        guard let node = child(key) else { throw .invalid(key: path + "." + key, reason: "missing") }
        return node
    }

    /// Refuses keys that are not in `keys`.
    func allow(_ keys: [String]) throws(NotifierConfigurationError) {
        guard let map = value as? [String: Any] else { throw .invalid(key: path, reason: "expected a mapping of keys") }
        for key in map.keys.sorted() where !keys.contains(key) {
            throw .invalid(
                key: path + "." + key, reason: "unknown key (known: \(keys.sorted().joined(separator: ", ")))")
        }
    }

    func map() throws(NotifierConfigurationError) -> [(String, Node)] {
        guard let map = value as? [String: Any] else { throw .invalid(key: path, reason: "expected a mapping") }
        return map.keys.sorted().map { ($0, Node(value: map[$0]!, path: path + "." + $0, base: base)) }
    }

    func list() throws(NotifierConfigurationError) -> [Node] {
        guard let list = value as? [Any] else { throw .invalid(key: path, reason: "expected a list (- item)") }
        return list.enumerated().map { Node(value: $1, path: "\(path)[\($0)]", base: base) }
    }

    func string() throws(NotifierConfigurationError) -> String {
        switch value {
        case let text as String: return text
        case let number as Int: return String(number)
        case let number as Double: return String(number)
        case let flag as Bool: return String(flag)
        default: throw .invalid(key: path, reason: "expected text")
        }
    }

    /// A list of strings; a single string counts as a list of one.
    func strings() throws(NotifierConfigurationError) -> [String] {
        if value is String { return [try string()] }
        return try list().map { node throws(NotifierConfigurationError) in try node.string() }
    }

    func bool() throws(NotifierConfigurationError) -> Bool {
        if let flag = value as? Bool { return flag }
        throw .invalid(key: path, reason: "true or false")
    }

    func integer(in range: ClosedRange<Int>) throws(NotifierConfigurationError) -> Int {
        let text = try string()
        guard let number = value as? Int ?? Int(text), range.contains(number) else {
            throw .invalid(key: path, reason: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    func duration() throws(NotifierConfigurationError) -> Duration {
        let text = try string()
        guard let duration = DurationText.parse(text) ?? Int(text).map({ Duration.seconds($0) }) else {
            throw .invalid(key: path, reason: "'\(text)' is not a duration; write 500ms, 90s, 10m, 2h or 1d")
        }
        return duration
    }

    func template() throws(NotifierConfigurationError) -> Template {
        let text = try string()
        do throws(TemplateError) {
            return try Template(text)
        } catch {
            throw .invalid(key: path, reason: error.description)
        }
    }

    /// 1–5, or ntfy's names: min, low, default, high, urgent.
    func priority() throws(NotifierConfigurationError) -> Int {
        let names = ["min": 1, "low": 2, "default": 3, "high": 4, "urgent": 5, "max": 5]
        let text = try string().lowercased()
        guard let value = names[text] ?? Int(text), (1...5).contains(value) else {
            throw .invalid(key: path, reason: "1 to 5, or min, low, default, high, urgent")
        }
        return value
    }

    func url() throws(NotifierConfigurationError) -> String {
        let text = try string()
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw .invalid(key: path, reason: "'\(text)' is not an http:// or https:// URL")
        }
        return text.hasSuffix("/") && url.path.isEmpty ? String(text.dropLast()) : text
    }

    /// A file name, relative ones taken from the configuration file's directory; `$CREDENTIALS_DIRECTORY/…` is
    /// where systemd's `LoadCredential=` put a secret for the (dynamic) user hubd runs as.
    func filePath() throws(NotifierConfigurationError) -> String {
        var text = try string()
        guard !text.isEmpty else { throw .invalid(key: path, reason: "a file name") }
        for prefix in ["$CREDENTIALS_DIRECTORY/", "${CREDENTIALS_DIRECTORY}/"] where text.hasPrefix(prefix) {
            guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"] else {
                throw .invalid(key: path, reason: "$CREDENTIALS_DIRECTORY is not set (see LoadCredential= in systemd)")
            }
            text = directory + "/" + text.dropFirst(prefix.count)
        }
        return text.hasPrefix("/") ? text : base + "/" + text
    }

    /// `<key>` given inline, or `<key>_file` naming a file that holds it (trailing newline removed).
    func secret(_ key: String) throws(NotifierConfigurationError) -> String? {
        if let inline = child(key) { return try inline.string() }
        guard let fileNode = child(key + "_file") else { return nil }
        let file = try fileNode.filePath()
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw .invalid(key: fileNode.path, reason: "cannot read \(file)")
        }
        return text.trimmingCharacters(in: .newlines)
    }
}
