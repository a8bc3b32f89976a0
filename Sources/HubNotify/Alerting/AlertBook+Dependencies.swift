import HubCore

// Dependencies: a sensor's parent (a gateway, a Zigbee bridge) offline holds its children's offline alerts.
extension AlertBook {
    /// Keeps `offline` up to date; a parent going offline holds its children's alerts not told yet, and one coming
    /// back lets those still open go, as new.
    mutating func followParents(_ event: SensorEvent, _ setup: Setup, now: Timestamp) {
        switch event.kind {
        case .silent, .offline:
            guard setup.parents?.contains(event.sensor) ?? true, offline.insert(event.sensor).inserted else { return }
            for (id, alert) in alerts
            where alert.firing && alert.kind == "offline" && alert.told.isEmpty && alert.heldBy == nil
                && ancestors(of: alert.sensor, setup).contains(event.sensor)
            {
                drop(id)
                var held = alert
                held.heldBy = event.sensor
                alerts[id] = held
            }
        case .recovered:
            guard offline.remove(event.sensor) != nil else { return }
            for (id, alert) in alerts where alert.heldBy == event.sensor {
                var alert = alert
                if let other = offlineAncestor(of: alert.sensor, setup) {
                    alert.heldBy = other
                    alerts[id] = alert
                    continue
                }
                alert.heldBy = nil
                alerts[id] = alert
                if let policy = setup.rules[alert.rule]?.alerting { join(alert, policy, now: now) }
            }
        default: return
        }
    }

    func ancestors(of sensor: String, _ setup: Setup) -> [String] {
        var chain: [String] = []
        var current = sensor
        // A loop in the configuration ends at eight.
        while chain.count < 8, let parent = setup.facts(current).parent, parent != sensor {
            chain.append(parent)
            current = parent
        }
        return chain
    }

    func offlineAncestor(of sensor: String, _ setup: Setup) -> String? {
        ancestors(of: sensor, setup).first { offline.contains($0) }
    }
}
