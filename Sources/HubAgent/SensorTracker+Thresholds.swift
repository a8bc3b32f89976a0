import HubCore

extension SensorTracker.Tracked {
    /// A sensor that goes offline: a breach waiting for its `for:` time does not alert for it (its value is no
    /// longer known to hold).
    mutating func cancelPendingThresholds() {
        for (name, var watch) in watches where watch.isPending {
            watch.cancelPending()
            watches[name] = watch
        }
    }
}

// The configured thresholds (`thresholds:` in hubd.yaml), watched on every sensor they name: one `ThresholdWatch`
// per rule and sensor, whose state survives a restart through the sensor's `alerts`.
extension SensorTracker {
    /// Takes new rules: a rule kept by name keeps its state (a sensor past it stays so, and clears once).
    public mutating func setThresholds(_ rules: [ThresholdRule]) {
        guard rules != thresholds else { return }
        thresholds = rules
        // The air-quality alert is a particulate sensor's own, not a configured rule: it stays.
        let names = Set(rules.map(\.name) + [AirQualityPolicy.alertName])
        for (topic, var tracked) in sensors where !tracked.watches.isEmpty || !tracked.alerts.isEmpty {
            tracked.watches = [:]
            let kept = tracked.alerts.filter(names.contains)
            if kept != tracked.alerts {
                tracked.alerts = kept
                dirty.insert(topic)
            }
            sensors[topic] = tracked
        }
        pendingThresholds = []
    }

    /// The threshold events a new value or new attributes cause.
    mutating func checkThresholds(
        _ tracked: inout Tracked, topic: String, number: Double?, time: Timestamp
    ) -> [SensorEvent] {
        var events: [SensorEvent] = []
        for rule in thresholds where rule.applies(to: tracked.name) {
            guard let value = rule.value(number: number, attributes: tracked.attributes) else { continue }
            var watch =
                tracked.watches[rule.name]
                ?? ThresholdWatch(limit: rule.limit, alerting: tracked.alerts.contains(rule.name))
            if let crossing = watch.observe(value, at: time.millisecondsSince1970) {
                events.append(event(crossing, rule: rule, &tracked, topic: topic, time: time))
            }
            if watch.isPending { pendingThresholds.insert(topic) }
            tracked.watches[rule.name] = watch
        }
        return events
    }

    /// Breaches that have now held for their `for:` time alert, without waiting for the next value.
    /// - Parameter among: only these sensors' (a cluster's step, which holds their rows).
    mutating func tickThresholds(time: Timestamp, among: Set<String>? = nil) -> [SensorEvent] {
        guard !pendingThresholds.isEmpty else { return [] }
        var events: [SensorEvent] = []
        for topic in pendingThresholds where among?.contains(topic) ?? true {
            guard var tracked = sensors[topic] else {
                pendingThresholds.remove(topic)
                continue
            }
            var pending = false
            for rule in thresholds {
                guard var watch = tracked.watches[rule.name] else { continue }
                if let crossing = watch.tick(at: time.millisecondsSince1970) {
                    events.append(event(crossing, rule: rule, &tracked, topic: topic, time: time))
                }
                pending = pending || watch.isPending
                tracked.watches[rule.name] = watch
            }
            if !pending { pendingThresholds.remove(topic) }
            sensors[topic] = tracked
        }
        return events
    }

    private mutating func event(
        _ crossing: ThresholdWatch.Crossing, rule: ThresholdRule, _ tracked: inout Tracked, topic: String,
        time: Timestamp
    ) -> SensorEvent {
        let raised = if case .raised = crossing { true } else { false }
        if raised {
            tracked.alerts = (tracked.alerts + [rule.name]).sorted()
        } else {
            tracked.alerts.removeAll { $0 == rule.name }
        }
        dirty.insert(topic)
        return SensorEvent(
            id: tracked.nextEventID(), kind: .threshold, sensor: tracked.name, topic: topic,
            oldStatus: raised ? "clear" : "alert", newStatus: raised ? "alert" : "clear", time: time,
            value: rule.message(crossing, format: tracked.format))
    }
}
