import Foundation
import HubCore
import HubSupport

/// The `alerts` section of hubd's configuration: what every alerting rule shares.
///
/// ```yaml
/// alerts:
///   storm: 20                     # more changes than this at once: one outage message
///   public_url: https://hub.example.net:8080   # where phones reach hubd's API, for buttons and links
///   quiet_hours:
///     night: { from: "22:00", to: "07:00", zone: Europe/Berlin }
///   sensors:
///     "zb-*": { parent: zigbee-bridge, labels: { room: garage } }
/// ```
public struct AlertSettings: Sendable {
    public var storm = 20
    /// How long a storm is judged over: changes across groups within it count together.
    public var stormWindow: Duration = .seconds(120)
    /// Where phones reach hubd's HTTP API (`https://hub.example.net:8080`): the buttons and links of alert
    /// messages point there. Without it, only backends that fetch their answers (Telegram) carry buttons.
    public var publicURL: String?
    public var quietHours: [QuietHours] = []
    /// `announce`: where silences are announced, instead of the backends of the rules a silence could hold.
    public var announce: [String]?
    /// Sensor globs with the labels and parent of the sensors they match, in the file's order.
    public var sensors: [(pattern: String, facts: AlertBook.SensorFacts)] = []

    public init() {}

    /// The `alerts` section's keys.
    static let keys: [ConfigKey] = [
        ConfigKey(
            "storm", "integer 2–1000000", default: "20",
            "When more alerts than this change within `storm_window`, across more than one group, the waiting ones go"
                + " as one \"Outage: N alerts\" message to every backend concerned, then one update once the storm is"
                + " calm, and one \"Outage over\"."),
        ConfigKey(
            "storm_window", "duration 10s–1h", default: "2m",
            "How long a storm is judged over (never shorter than a rule's `group_wait`): a power cut's wills come as"
                + " each sensor's keepalive runs out, 1.5 keepalives after its last packet, so 2 minutes takes in a"
                + " 60-second keepalive's spread with room to spare."),
        ConfigKey(
            "public_url", "URL",
            "Where phones reach hubd's HTTP API (`https://hub.example.net:8080`): ntfy's Acknowledge and Snooze"
                + " buttons and the links at the end of email, Gotify, Slack, Discord, Pushover and Matrix messages"
                + " point there. Without it they are left out; Telegram's buttons and Matrix's reactions work"
                + " without it."),
        ConfigKey(
            "announce", "list of backend names",
            "Where a silence added, ended early or a snooze is announced (\"ana silenced door* for 2 h — painting\")."
                + " By default the backends of every rule the silence could hold; `[]` announces nothing."),
        ConfigKey(
            "quiet_hours", "mapping of names to windows",
            "Named time windows (`alerts.quiet_hours.<name>`) that rules and backends name in their `quiet_hours`."),
        ConfigKey(
            "sensors", "mapping of globs to sensor facts",
            "Sensor names or globs with the parent and labels of the sensors they match"
                + " (`alerts.sensors.<glob>`); every entry that matches adds its labels."),
    ]

    /// The keys of one entry of `alerts.sensors`.
    static let sensorKeys: [ConfigKey] = [
        ConfigKey(
            "parent", "text",
            "The sensor these depend on (a gateway, a Zigbee bridge): while it is offline, their offline alerts are"
                + " held, and sent when it is back if they are still offline. The first matching entry with a parent"
                + " gives it."),
        ConfigKey(
            "labels", "mapping of texts",
            "Labels of the matching sensors (`room: garage`), for a rule's `group_by` and silences' matchers; not"
                + " `sensor`, `rule`, `kind` or `status`. An earlier entry's label wins over a later one's."),
    ]

    /// The keys of one window of `alerts.quiet_hours`.
    static let quietHoursKeys: [ConfigKey] = [
        ConfigKey(
            "from", "time 00:00–24:00",
            "Required. When the window starts (`\"22:00\"`), in `zone`."),
        ConfigKey(
            "to", "time 00:00–24:00",
            "Required. When it ends (`\"07:00\"`, `\"24:00\"`); earlier than `from`, it runs overnight. Not the"
                + " same as `from`."),
        ConfigKey(
            "days", "list of: mon, tue, wed, thu, fri, sat, sun",
            "The weekdays the window starts on; every day when left out."),
        ConfigKey(
            "zone", "IANA time zone",
            "The time zone of `from` and `to` (`Europe/Berlin`); the machine's when left out."),
    ]

    /// The labels of every entry that matches `sensor`, and the parent of the first that names one.
    public func facts(_ sensor: String) -> AlertBook.SensorFacts {
        var facts = AlertBook.SensorFacts()
        for (pattern, entry) in sensors where glob(pattern, sensor) {
            facts.labels.merge(entry.labels) { first, _ in first }
            if facts.parent == nil, entry.parent != sensor { facts.parent = entry.parent }
        }
        return facts
    }

    static func read(_ node: ConfigNode) throws(ConfigurationError) -> AlertSettings {
        try node.allow(keys)
        var settings = AlertSettings()
        settings.publicURL = try node["public_url"].url()
        if let storm = try node["storm"].integer(in: 2...1_000_000) { settings.storm = storm }
        settings.announce = try node["announce"].strings()
        if let window = try node["storm_window"].duration(in: .seconds(10)...(.seconds(3600))) {
            settings.stormWindow = window
        }
        for (name, window) in try node["quiet_hours"].entries() {
            settings.quietHours.append(try quietHours(window, name: name))
        }
        for (pattern, entry) in try node["sensors"].entries() {
            try entry.allow(sensorKeys)
            var facts = AlertBook.SensorFacts(parent: try entry["parent"].string())
            for (label, value) in try entry["labels"].entries() {
                guard !["sensor", "rule", "kind", "status"].contains(label) else {
                    throw value.invalid("'\(label)' is an alert's own field, not a label")
                }
                guard let text = try value.string() else { throw value.invalid("a label needs a value (room: garage)") }
                facts.labels[label] = text
            }
            settings.sensors.append((pattern, facts))
        }
        return settings
    }

    private static func quietHours(_ node: ConfigNode, name: String) throws(ConfigurationError) -> QuietHours {
        try node.allow(quietHoursKeys)
        func time(_ key: String) throws(ConfigurationError) -> Int {
            guard let minutes = try node[key].value("a time from 00:00 to 24:00, like \"22:00\"", QuietHours.minutes)
            else {
                throw node.invalid("say when the quiet hours \(key == "from" ? "start" : "end") (\(key): \"07:00\")")
            }
            return minutes
        }
        let (from, to) = (try time("from"), try time("to"))
        guard from != to else { throw node["to"].invalid("the window is empty: from and to are the same time") }
        var days = Set<Int>()
        for (text, item) in try node["days"].stringItems() ?? [] {
            guard let index = QuietHours.dayNames.firstIndex(of: String(text.lowercased().prefix(3))) else {
                throw item.invalid("'\(text)' is not a weekday; use mon, tue, wed, thu, fri, sat, sun")
            }
            days.insert(index + 1)
        }
        let zone = try node["zone"].value("an IANA time zone like Europe/Berlin") { TimeZone(identifier: $0) }
        return QuietHours(name: name, from: from, to: to, days: days, zone: zone ?? .current)
    }
}

extension NotifierConfiguration {
    /// What the alert stage needs of this configuration.
    public var alertSetup: AlertBook.Setup {
        let settings = alerts
        var setup = AlertBook.Setup(
            rules: rules, quietHours: settings.quietHours, storm: settings.storm, facts: { settings.facts($0) },
            parents: Set(settings.sensors.compactMap(\.facts.parent)))
        for backend in backends where !backend.quietHours.isEmpty {
            setup.backendQuietHours[backend.name] = backend.quietHours
        }
        setup.announce = settings.announce
        setup.stormWindow = settings.stormWindow
        // Plain rules too: a silence holds their notifications as well (`NotificationRouter.isSilenced`).
        for rule in rules { setup.ruleBackends[rule.name] = rule.backends }
        return setup
    }

    /// A rule's `group_by`, `group_wait`, `group_interval`, `repeat`, `repeat_limit`, `escalate`, `quiet_hours`:
    /// with any of them the rule makes alerts. The defaults are an alerting rule's (`AlertPolicy()`).
    static let alertKeys: [ConfigKey] = [
        ConfigKey(
            "group_by", "list of texts",
            "Makes the rule's events alerts, split into groups of one message each by `kind`, `sensor`, `status`,"
                + " `rule` or a label from `alerts.sensors` (`room`); all of the rule's alerts are one group when left"
                + " out."),
        ConfigKey(
            "group_wait", "duration 0s–1d", default: "30s",
            "Makes the rule's events alerts. How long a new group waits before its first message: an alert that"
                + " opens and closes within it sends nothing."),
        ConfigKey(
            "group_interval", "duration 1s–7d", default: "5m",
            "Makes the rule's events alerts. After a group's message, how long its changes wait to go together in"
                + " the next one."),
        ConfigKey(
            "repeat", "duration 1s–7d, or a list of them",
            "Makes the rule's events alerts. Reminders while a group's alerts fire and nobody acknowledged them:"
                + " the gaps (`[15m, 30m, 1h]`), the last one repeating. No reminders when left out."),
        ConfigKey(
            "repeat_limit", "integer 0–1000", default: "10",
            "Makes the rule's events alerts. At most this many reminders per group."),
        ConfigKey(
            "escalate", "list of steps (after, to)",
            "Makes the rule's events alerts. Steps to other backends, each sent once per alert that still fires"
                + " and is not acknowledged `after` its first message; see `notifiers.rules.<name>.escalate[]`."),
        ConfigKey(
            "quiet_hours", "list of quiet-hours names",
            "Makes the rule's events alerts. Windows from `alerts.quiet_hours` in which its messages below urgent"
                + " wait; when a window ends, one digest says what is still open and what ended."),
    ]

    /// The keys of one step of a rule's `escalate`.
    static let escalationKeys: [ConfigKey] = [
        ConfigKey(
            "after", "duration 1s–7d",
            "Required. How long after an alert's first message the step goes, when the alert still fires and nobody"
                + " acknowledged it."),
        ConfigKey(
            "to", "list of backend names",
            "Required. The backends (from `notifiers.backends`) the step sends to; they also get the alert's resolved"
                + " message."),
    ]

    static func readAlerting(
        _ node: ConfigNode, backends: Set<String>, quietHours: Set<String>
    ) throws(ConfigurationError) -> AlertPolicy? {
        let names = alertKeys.map(\.name)
        guard try node.keys().contains(where: names.contains) else { return nil }
        var policy = AlertPolicy()
        policy.groupBy = try node["group_by"].strings() ?? []
        if let wait = try node["group_wait"].duration(in: .zero...Duration.seconds(86_400)) { policy.groupWait = wait }
        if let interval = try node["group_interval"].duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) {
            policy.groupInterval = interval
        }
        let repeatNode = node["repeat"]
        if (try? repeatNode.list()) != nil {
            for item in try repeatNode.list() {
                guard let gap = try item.duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) else {
                    throw item.invalid("an empty gap: each item of repeat is a duration (15m)")
                }
                policy.repeatEvery.append(gap)
            }
        } else if let gap = try repeatNode.duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) {
            policy.repeatEvery = [gap]
        }
        if let limit = try node["repeat_limit"].integer(in: 0...1000) { policy.repeatLimit = limit }
        for step in try node["escalate"].list() {
            try step.allow(escalationKeys)
            guard let after = try step["after"].duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) else {
                throw step.invalid("say after how long without an acknowledgement (after: 10m)")
            }
            guard let targets = try step["to"].stringItems(), !targets.isEmpty else {
                throw step.invalid("say which backends the step sends to (to: [partner-phone])")
            }
            for (target, item) in targets where !backends.contains(target) {
                throw item.invalid("no backend is named '\(target)'")
            }
            policy.escalate.append(.init(after: after, backends: targets.map(\.text)))
        }
        try checkQuietHours(node["quiet_hours"], known: quietHours)
        policy.quietHours = try node["quiet_hours"].strings() ?? []
        return policy
    }

    /// A rule's or a backend's `quiet_hours`: names of windows in `alerts.quiet_hours`.
    static func checkQuietHours(_ node: ConfigNode, known: Set<String>) throws(ConfigurationError) {
        for (name, item) in try node.stringItems() ?? [] where !known.contains(name) {
            let names = known.sorted().joined(separator: ", ")
            throw item.invalid(
                "no quiet hours are named '\(name)' in alerts.quiet_hours (\(names.isEmpty ? "none" : names))")
        }
    }
}
