import HubCore
import HubSupport

extension NotifierConfiguration {
    /// What looks wrong in the rules against the registry's sensors, in words: a `sensors:` glob that matches no
    /// sensor, and `statuses:` no sensor the rule covers can ever send (its map names other statuses: Zigbee2MQTT's
    /// `water_leak` says `leak` or `dry`, never `wet`). Warnings, not refusals: sensors come and go. `hubd
    /// --check-config` prints them; hubd logs them at start.
    public func warnings(sensors: [Sensor]) -> [String] {
        var warnings: [String] = []
        for rule in rules {
            for pattern in rule.sensors where !sensors.contains(where: { glob(pattern, $0.name) }) {
                warnings.append("rule '\(rule.name)': sensors '\(pattern)' matches no sensor now")
            }
            guard !rule.statuses.isEmpty, rule.events.isEmpty || rule.events.contains(.changed) else { continue }
            for sensor in sensors where glob(anyOf: rule.sensors, sensor.name) {
                guard let map = sensor.format.map else { continue }
                let said = map.entries.map(\.to)
                guard !rule.statuses.contains(where: { status in said.contains { glob(status, $0) } }) else { continue }
                warnings.append(
                    "rule '\(rule.name)': statuses \(rule.statuses.joined(separator: ", ")) never come from "
                        + "'\(sensor.name)', whose map gives \(said.joined(separator: ", "))")
            }
        }
        return warnings
    }
}
