import Foundation
import HubCore
import Logging

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
/// Rules are a mapping by name, like backends. Without a `notifiers` section no notifications are sent: events are
/// only in hubd's log. Unknown keys are errors (a typo must not silently switch a notification off). It is read
/// through the same `ConfigNode` as the rest of the file: `HUB_*` overrides reach every key, and SIGHUP reloads it.
public struct NotifierConfiguration: Sendable {
    public var backends: [BackendSpec]
    public var rules: [NotificationRule]
    /// The top-level `alerts` section: quiet hours, the storm guard, sensors' parents and labels.
    public var alerts = AlertSettings()

    public init(backends: [BackendSpec], rules: [NotificationRule], alerts: AlertSettings = AlertSettings()) {
        self.backends = backends
        self.rules = rules
        self.alerts = alerts
    }

    /// No backends, no rules: what a hub without a `notifiers` section does.
    public static let `default` = NotifierConfiguration(backends: [], rules: [])

    /// Reads the `notifiers` section of the configuration at `root`; the default when there is none.
    public static func read(_ root: ConfigNode) throws(ConfigurationError) -> NotifierConfiguration {
        let node = root["notifiers"]
        try node.allow(sectionKeys)
        let alerts = try AlertSettings.read(root["alerts"])
        let windows = Set(alerts.quietHours.map(\.name))
        var backends: [BackendSpec] = []
        for (name, backend) in try node["backends"].entries() {
            guard name.range(of: #"^[A-Za-z0-9_-]{1,64}$"#, options: .regularExpression) != nil else {
                throw backend.invalid("a backend name is 1–64 letters, digits, - or _")
            }
            try checkQuietHours(backend["quiet_hours"], known: windows)
            backends.append(try BackendSpec(name: name, node: backend))
        }
        let names = Set(backends.map(\.name))
        for (target, item) in try root["alerts"]["announce"].stringItems() ?? [] where !names.contains(target) {
            let known = names.sorted().joined(separator: ", ")
            throw item.invalid("no backend is named '\(target)' (backends: \(known.isEmpty ? "none" : known))")
        }
        var rules: [NotificationRule] = []
        for (name, rule) in try node["rules"].entries() {
            var read = try readRule(rule, name: name, backends: names)
            read.alerting = try readAlerting(rule, backends: names, quietHours: windows)
            rules.append(read)
        }
        return NotifierConfiguration(backends: backends, rules: rules, alerts: alerts)
    }

    /// Reads the `notifiers` section of `text` (YAML); relative file names are taken from `file`'s directory.
    public static func parse(
        _ text: String, file: String? = nil, environment: [String: String] = [:]
    ) throws(ConfigurationError) -> NotifierConfiguration {
        try read(ConfigNode.parse(text, file: file, environment: environment))
    }

    /// The `notifiers` section's keys.
    static let sectionKeys: [ConfigKey] = [
        ConfigKey(
            "backends", "mapping of names to backends",
            "Where notifications go, by name (1–64 letters, digits, - or _): each is a `notifiers.backends.<name>`."),
        ConfigKey(
            "rules", "mapping of names to rules",
            "Which events go to which backends, by name: each is a `notifiers.rules.<name>`. Without a rule no event"
                + " is sent anywhere."),
    ]

    /// A rule's keys other than the alerting ones (`alertKeys`).
    static let ruleKeys: [ConfigKey] = [
        ConfigKey(
            "backends", "list of backend names",
            "Required. The backends (from `notifiers.backends`) this rule sends to."),
        ConfigKey(
            "events", "list of: " + SensorEvent.Kind.choosableKinds.map(\.rawValue).joined(separator: ", "),
            "The kinds of event the rule takes; every kind but `session` when left out."),
        ConfigKey(
            "sensors", "list of texts",
            "Sensor names or globs (`door*`, `*-temp`), matched regardless of case; every sensor when left out."),
        ConfigKey(
            "statuses", "list of texts",
            "Globs on the new status (`open*`, `alarm*`); any status when left out. Under an alerting rule a"
                + " `changed` event with a matching status opens an alert and one with another status closes it."),
        ConfigKey(
            "title", "template",
            "The notification's title, with placeholders "
                + Template.placeholders.map { "{\($0)}" }.joined(separator: " ")
                + "; without it, a title made for the event's kind."),
        ConfigKey(
            "message", "template",
            "The notification's text, with the same placeholders as `title`; without it, a text made for the"
                + " event's kind."),
        ConfigKey(
            "priority", "1–5 or min, low, default, high, urgent", default: "3",
            "How much the notification matters; backends with priorities of their own translate it (ntfy, Gotify,"
                + " Pushover, where urgent is an emergency; Telegram sends below 3 silently). Urgent alert messages"
                + " pass quiet hours."),
        ConfigKey(
            "rate_limit", "duration",
            "At most one notification per sensor under this rule in this long; the rest are left out, logged and"
                + " counted. No limit when left out."),
    ]

    static func readRule(_ node: ConfigNode, name: String, backends: Set<String>) throws(ConfigurationError)
        -> NotificationRule
    {
        try node.allow(ruleKeys + alertKeys)
        let backendNode = node["backends"]
        guard let targets = try backendNode.stringItems() else {
            throw backendNode.invalid("say which backends this rule sends to")
        }
        // A message about one item names it: notifiers.rules.doors.backends[2].
        for (target, item) in targets where !backends.contains(target) {
            let known = backends.sorted().joined(separator: ", ")
            throw item.invalid("no backend is named '\(target)' (backends: \(known.isEmpty ? "none" : known))")
        }
        var rule = NotificationRule(name: name, backends: targets.map(\.text))
        for (text, item) in try node["events"].stringItems() ?? [] {
            guard let kind = SensorEvent.Kind(chosen: text) else {
                throw item.invalid("'\(text)' is not an event; use \(SensorEvent.Kind.choosable)")
            }
            rule.events.insert(kind)
        }
        rule.sensors = try node["sensors"].strings() ?? []
        rule.statuses = try node["statuses"].strings() ?? []
        rule.title = try node["title"].template()
        rule.body = try node["message"].template()
        if let priority = try node["priority"].priority() { rule.priority = priority }
        rule.rateLimit = try node["rate_limit"].duration()
        return rule
    }
}

extension ConfigNode {
    /// A notification template (`{sensor} is {new}`).
    func template() throws(ConfigurationError) -> Template? {
        try value("a template") { try Template($0) }
    }

    /// 1–5, or ntfy's names: min, low, default, high, urgent.
    func priority() throws(ConfigurationError) -> Int? {
        let names = ["min": 1, "low": 2, "default": 3, "high": 4, "urgent": 5, "max": 5]
        return try value("1 to 5, or min, low, default, high, urgent") { text in
            (names[text.lowercased()] ?? Int(text)).flatMap { (1...5).contains($0) ? $0 : nil }
        }
    }
}

extension NotifierConfiguration {
    /// Makes every backend as hubd does when it starts (the files they name read, keys and certificates parsed) in
    /// `stateDirectory`, and lets them go: what `hubd --check-config` checks beyond reading the file. Nothing is
    /// sent, and an `mqtt` backend is made with a publisher that refuses.
    public func makeEveryBackend(stateDirectory: String, logger: Logger) throws(ConfigurationError) {
        for spec in backends {
            let notifier = try spec.makeNotifier(
                stateDirectory: stateDirectory, logger: logger,
                publish: { _, _, _, _, _, done in done(CancellationError()) })
            (notifier as? any HTTPBacked)?.http.shutdownNow()
        }
    }
}
