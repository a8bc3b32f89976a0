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
    /// Where phones reach hubd's HTTP API (`https://hub.example.net:8080`): the buttons and links of alert
    /// messages point there. Without it, only backends that fetch their answers (Telegram) carry buttons.
    public var publicURL: String?
    public var quietHours: [QuietHours] = []
    /// Sensor globs with the labels and parent of the sensors they match, in the file's order.
    public var sensors: [(pattern: String, facts: AlertBook.SensorFacts)] = []

    public init() {}

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
        try node.allow(["storm", "quiet_hours", "sensors", "public_url"])
        var settings = AlertSettings()
        settings.publicURL = try node["public_url"].url()
        if let storm = try node["storm"].integer(in: 2...1_000_000) { settings.storm = storm }
        for (name, window) in try node["quiet_hours"].entries() {
            settings.quietHours.append(try quietHours(window, name: name))
        }
        for (pattern, entry) in try node["sensors"].entries() {
            try entry.allow(["parent", "labels"])
            var facts = AlertBook.SensorFacts(parent: try entry["parent"].string())
            for (label, value) in try entry["labels"].entries() {
                guard !["sensor", "rule", "kind", "status"].contains(label) else {
                    throw value.invalid("'\(label)' is an alert's own field, not a label")
                }
                guard let text = try value.string() else { continue }
                facts.labels[label] = text
            }
            settings.sensors.append((pattern, facts))
        }
        return settings
    }

    private static func quietHours(_ node: ConfigNode, name: String) throws(ConfigurationError) -> QuietHours {
        try node.allow(["from", "to", "days", "zone"])
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
        return setup
    }

    /// A rule's `group_by`, `group_wait`, `group_interval`, `repeat`, `repeat_limit`, `escalate`, `quiet_hours`:
    /// with any of them the rule makes alerts.
    static let alertKeys = [
        "group_by", "group_wait", "group_interval", "repeat", "repeat_limit", "escalate", "quiet_hours",
    ]

    static func readAlerting(
        _ node: ConfigNode, backends: Set<String>, quietHours: Set<String>
    ) throws(ConfigurationError) -> AlertPolicy? {
        guard try node.keys().contains(where: alertKeys.contains) else { return nil }
        var policy = AlertPolicy()
        policy.groupBy = try node["group_by"].strings() ?? []
        if let wait = try node["group_wait"].duration(in: .zero...Duration.seconds(86_400)) { policy.groupWait = wait }
        if let interval = try node["group_interval"].duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) {
            policy.groupInterval = interval
        }
        let repeatNode = node["repeat"]
        if (try? repeatNode.list()) != nil {
            for item in try repeatNode.list() {
                guard let gap = try item.duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) else { continue }
                policy.repeatEvery.append(gap)
            }
        } else if let gap = try repeatNode.duration(in: .seconds(1)...Duration.seconds(7 * 86_400)) {
            policy.repeatEvery = [gap]
        }
        if let limit = try node["repeat_limit"].integer(in: 0...1000) { policy.repeatLimit = limit }
        for step in try node["escalate"].list() {
            try step.allow(["after", "to"])
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
