import Foundation
import HubCore
import HubSupport

extension AlertBook {
    /// What the book needs to know besides its own state: the rules, the quiet windows, the storm limit, and each
    /// sensor's labels and parent.
    public struct Setup: Sendable {
        public var rules: [String: NotificationRule] = [:]
        public var quietHours: [String: QuietHours] = [:]
        /// More changes than this within `stormWindow`, across groups, become one outage message.
        public var storm = 20
        /// `alerts.storm_window`: how long a storm is judged over (wills spread over a keepalive are one storm).
        public var stormWindow: Duration = .seconds(120)
        public var facts: @Sendable (String) -> SensorFacts = { _ in SensorFacts() }
        /// The sensors some sensor depends on, when known: only their going offline is looked for among the alerts
        /// (10,000 sensors offline at once were 10,000 scans of every alert). `nil`: any sensor may be a parent.
        public var parents: Set<String>?
        /// Each backend's quiet hours, by name, for those that have any.
        public var backendQuietHours: [String: [String]] = [:]
        /// `alerts.announce`: where silences are announced; nil for the backends of the rules a silence could hold.
        public var announce: [String]?
        /// Every rule's backends, alerting or not, by rule name: where a silence is announced by default.
        public var ruleBackends: [String: [String]] = [:]

        public init(
            rules: [NotificationRule], quietHours: [QuietHours] = [], storm: Int = 20,
            facts: @escaping @Sendable (String) -> SensorFacts = { _ in SensorFacts() }, parents: Set<String>? = nil
        ) {
            for rule in rules where rule.alerting != nil { self.rules[rule.name] = rule }
            for window in quietHours { self.quietHours[window.name] = window }
            self.storm = storm
            self.facts = facts
            self.parents = parents
        }

        /// Whether any rule makes alerts: without, events take the plain path.
        public var isEmpty: Bool { rules.isEmpty }

        /// Whether `status` is one an alerting rule fires on for `sensor`: a rule that takes changes, covers the
        /// sensor and names the status (a rule naming no status fires on every change, and says nothing of one).
        public func alarms(sensor: String, status: String) -> Bool {
            rules.values.contains { rule in
                !rule.statuses.isEmpty && (rule.events.isEmpty || rule.events.contains(.changed))
                    && glob(anyOf: rule.sensors, sensor) && glob(anyOf: rule.statuses, status)
            }
        }
    }

    /// A sensor's labels (`room: garage`) and the sensor it depends on.
    public struct SensorFacts: Sendable, Hashable {
        public var labels: [String: String]
        public var parent: String?
        public init(labels: [String: String] = [:], parent: String? = nil) {
            self.labels = labels
            self.parent = parent
        }
    }
}
