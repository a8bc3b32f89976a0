/// Alerts as Home Assistant entities. For each rule that makes alerts, two entities on the hub's device:
///
/// - a `sensor` "Alerts: <rule>" whose state is `ok`, `firing` (an alert of the rule fires and nobody acknowledged
///   it) or `acknowledged` (every one that fires is acknowledged), with the open alerts in its attributes; three
///   states rather than a `problem` binary sensor, because what an automation does about an acknowledged leak (stop
///   the siren, keep the light red) is not what it does about one nobody saw;
/// - a `button` "Acknowledge <rule> alerts": Home Assistant publishes `PRESS` to its command topic and hubd
///   acknowledges the rule's firing alerts the way `hubctl alerts ack` does.
///
/// The state is retained JSON on `<base>/alerts/<hub>/<rule>/state`: `{"state": …, "attributes": {…}}`. Alerts held
/// by an offline parent are listed (`held`) but make the state no worse than it is without them: the parent's own
/// alert is the one to act on. A value type with no I/O, like the rest of `HomeAssistantDiscovery`.
extension HomeAssistantDiscovery {
    /// One open alert as the entity lists it.
    public struct OpenAlert: Sendable, Hashable {
        public enum State: String, Sendable, Comparable {
            case firing, acknowledged, held

            public static func < (lhs: State, rhs: State) -> Bool { lhs.order < rhs.order }
            var order: Int { self == .firing ? 0 : self == .acknowledged ? 1 : 2 }
        }

        public var id: String
        public var sensor: String
        public var kind: String
        /// The status that opened it.
        public var status: String
        public var state: State
        /// Its state in words, as `hubctl alerts` shows it.
        public var text: String
        public var opened: Timestamp
        public var acknowledged: Acknowledgement?
        public var heldBy: String?

        public struct Acknowledgement: Sendable, Hashable {
            public var by: String
            public var via: String
            public var at: Timestamp
            public init(by: String, via: String, at: Timestamp) { (self.by, self.via, self.at) = (by, via, at) }
        }

        public init(
            id: String, sensor: String, kind: String, status: String, state: State, text: String, opened: Timestamp,
            acknowledged: Acknowledgement? = nil, heldBy: String? = nil
        ) {
            (self.id, self.sensor, self.kind, self.status, self.state, self.text, self.opened) = (
                id, sensor, kind, status, state, text, opened
            )
            self.acknowledged = acknowledged
            self.heldBy = heldBy
        }
    }

    /// What the button publishes (Home Assistant's default, said explicitly).
    public static let acknowledgePress = "PRESS"
    /// Who an acknowledgement from the button is by, and through what.
    public static let acknowledgedBy = "Home Assistant"
    public static let acknowledgedVia = "homeassistant"
    /// At most this many alerts in the attributes (the rest counted in `more`): Home Assistant's recorder keeps no
    /// attributes over 16 KiB, and a 10,000-sensor power cut is one rule.
    public static let listedAlerts = 20

    /// A rule's name as it goes into topics and unique ids: itself when it is `[A-Za-z0-9_-]` only, otherwise those
    /// characters with a hash of the name after them (so `a b` and `a_b` stay two rules).
    public static func ruleID(_ rule: String) -> String {
        let plain = identifier(rule)
        if plain == rule && !rule.isEmpty { return rule }
        var hash: UInt32 = 2_166_136_261
        for byte in rule.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let hex = String(hash, radix: 16)
        return "\(plain)_\(String(repeating: "0", count: 8 - hex.count))\(hex)"
    }

    public var alertBase: String { "\(base)/alerts/\(hubID)" }
    public func alertStateTopic(ruleID: String) -> String { "\(alertBase)/\(ruleID)/state" }
    public func alertCommandTopic(ruleID: String) -> String { "\(alertBase)/\(ruleID)/acknowledge" }

    /// What hubd subscribes to: the buttons' presses, and the states it published before (retained), which say
    /// which rules had entities when it was not running to remove them.
    public var alertFilters: [String] { ["\(alertBase)/+/acknowledge", "\(alertBase)/+/state"] }

    /// The rule a topic of `alertFilters` is about, and whether it is a press (or a state).
    public func alertTopic(_ topic: String) -> (ruleID: String, press: Bool)? {
        guard topic.hasPrefix(alertBase + "/") else { return nil }
        let rest = topic.dropFirst(alertBase.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2, !rest[0].isEmpty, rest[1] == "acknowledge" || rest[1] == "state" else { return nil }
        return (String(rest[0]), rest[1] == "acknowledge")
    }

    /// The config topics of a rule's entities: the sensor's, then the button's.
    public func alertConfigTopics(ruleID: String) -> [String] {
        ["sensor", "button"].map { "\(prefix)/\($0)/sensorhub/\(hubID)_alerts_\(ruleID)/config" }
    }

    /// The discovery configs of `rule`'s entities: the sensor, then the button.
    public func alertConfigs(rule: String) -> [Message] {
        let ruleID = Self.ruleID(rule)
        let topics = alertConfigTopics(ruleID: ruleID)
        let state = alertStateTopic(ruleID: ruleID)
        let sensor = alertConfig(name: "Alerts: \(rule)", uniqueID: "\(hubDevice)_alerts_\(ruleID)") {
            writer, first in
            member(&writer, &first, "state_topic", state)
            member(&writer, &first, "value_template", "{{ value_json.state }}")
            member(&writer, &first, "json_attributes_topic", state)
            member(&writer, &first, "json_attributes_template", "{{ value_json.attributes | tojson }}")
            member(&writer, &first, "icon", "mdi:bell-alert")
        }
        let button = alertConfig(
            name: "Acknowledge \(rule) alerts", uniqueID: "\(hubDevice)_alerts_\(ruleID)_acknowledge"
        ) { writer, first in
            member(&writer, &first, "command_topic", alertCommandTopic(ruleID: ruleID))
            member(&writer, &first, "payload_press", Self.acknowledgePress)
            // At least once: a second press finds nothing left to acknowledge.
            writer.key("qos", first: &first)
            writer.number(1)
            member(&writer, &first, "icon", "mdi:bell-check")
        }
        return [Message(topic: topics[0], payload: sensor), Message(topic: topics[1], payload: button)]
    }

    private func alertConfig(
        name: String, uniqueID: String, _ members: (inout JSONWriter, inout Bool) -> Void
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 768, compact: true)
        var first = true
        writer.raw("{")
        member(&writer, &first, "name", name)
        member(&writer, &first, "unique_id", uniqueID)
        members(&writer, &first)
        // The hub's own: an entity of a hub that stopped is unavailable, not a stale "ok".
        writer.key("availability", first: &first)
        var inner = true
        writer.raw("[{")
        member(&writer, &inner, "topic", hubAvailability)
        writer.raw("}]")
        // On the hub's device (the hub's connectivity config names it; the name here for whichever comes first).
        writer.key("device", first: &first)
        inner = true
        writer.raw("{")
        writer.key("identifiers", first: &inner)
        writer.strings([hubDevice])
        member(&writer, &inner, "name", "SensorHub")
        writer.raw("}")
        origin(&writer, &first)
        writer.raw("}")
        return writer.bytes
    }

    /// The entity's state for a rule's open alerts: `firing` when one fires that nobody acknowledged (held ones
    /// aside), `acknowledged` when every one that fires is acknowledged, else `ok`.
    public static func alertState(of alerts: [OpenAlert]) -> String {
        if alerts.contains(where: { $0.state == .firing }) { return "firing" }
        return alerts.contains(where: { $0.state == .acknowledged }) ? "acknowledged" : "ok"
    }

    /// The retained state of `rule`'s entity: `state`, and `attributes` with the rule, the counts by state and the
    /// alerts (firing first, then acknowledged, then held, each oldest first; at most `listedAlerts`, the rest counted
    /// in `more`).
    public static func alertStatePayload(rule: String, alerts: [OpenAlert]) -> [UInt8] {
        let sorted = alerts.sorted { ($0.state, $0.opened, $0.id) < ($1.state, $1.opened, $1.id) }
        var writer = JSONWriter(capacity: 256 + 256 * min(sorted.count, listedAlerts), compact: true)
        var first = true
        writer.raw("{")
        writer.key("state", first: &first)
        writer.string(alertState(of: alerts))
        writer.key("attributes", first: &first)
        var attributes = true
        writer.raw("{")
        writer.key("rule", first: &attributes)
        writer.string(rule)
        for state in [OpenAlert.State.firing, .acknowledged, .held] {
            writer.key(state.key, first: &attributes)
            writer.number(alerts.count { $0.state == state })
        }
        writer.key("alerts", first: &attributes)
        writer.raw("[")
        for (index, alert) in sorted.prefix(listedAlerts).enumerated() {
            if index > 0 { writer.raw(",") }
            write(alert, into: &writer)
        }
        writer.raw("]")
        writer.key("more", first: &attributes)
        writer.number(max(0, sorted.count - listedAlerts))
        writer.raw("}}")
        return writer.bytes
    }

    private static func write(_ alert: OpenAlert, into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        for (key, value) in [
            ("id", alert.id), ("sensor", alert.sensor), ("kind", alert.kind), ("status", alert.status),
            ("state", alert.state.rawValue), ("text", alert.text),
        ] {
            writer.key(key, first: &first)
            writer.string(value)
        }
        writer.key("opened", first: &first)
        writer.timestamp(alert.opened)
        if let acknowledged = alert.acknowledged {
            writer.key("acknowledged_by", first: &first)
            writer.string(acknowledged.by)
            writer.key("acknowledged_via", first: &first)
            writer.string(acknowledged.via)
            writer.key("acknowledged_at", first: &first)
            writer.timestamp(acknowledged.at)
        }
        if let heldBy = alert.heldBy {
            writer.key("held_by", first: &first)
            writer.string(heldBy)
        }
        writer.raw("}")
    }
}

extension HomeAssistantDiscovery.OpenAlert.State {
    fileprivate var key: StaticString {
        switch self {
        case .firing: "firing"
        case .acknowledged: "acknowledged"
        case .held: "held"
        }
    }
}
