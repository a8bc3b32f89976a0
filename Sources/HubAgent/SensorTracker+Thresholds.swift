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

// Alerts in a cluster, where each agent takes some of a sensor's values (docs/cluster.md).
extension SensorTracker {
    /// The sensor's alerts say whether `monitor` is alerting.
    static func follow(_ monitor: AirQualityMonitor, in tracked: inout Tracked) {
        guard monitor.alerting != tracked.alerts.contains(AirQualityPolicy.alertName) else { return }
        tracked.alerts =
            monitor.alerting
            ? (tracked.alerts + [AirQualityPolicy.alertName]).sorted()
            : tracked.alerts.filter { $0 != AirQualityPolicy.alertName }
    }

    /// The air-quality event for `alert`.
    func airEvent(_ alert: AirQualityMonitor.Alert, _ tracked: inout Tracked, topic: String, time: Timestamp)
        -> SensorEvent
    {
        SensorEvent(
            id: tracked.nextEventID(), kind: .airQuality, sensor: tracked.name, topic: topic,
            oldStatus: alert.raised ? "clear" : "alert", newStatus: alert.raised ? "alert" : "clear", time: time,
            value: alert.message)
    }

    /// A value another agent committed (its row, just caught up with), seen here as if this agent had taken it:
    /// each alert first takes its state from the row (another agent may have raised or cleared it), then the value
    /// goes into the watches and the particulate averages. So a `for:` alerts only when the breach held, whichever
    /// agents took the values; no alert is raised or cleared twice; and the averages have the others' readings
    /// this agent catches up with. A banded numeric sensor's row holds its band, not its number: its thresholds see
    /// only this agent's values.
    mutating func observeCommitted(_ tracked: inout Tracked, topic: String, time: Timestamp) -> [SensorEvent] {
        for (name, watch) in tracked.watches where watch.alerting != tracked.alerts.contains(name) {
            guard let rule = thresholds.first(where: { $0.name == name }) else { continue }
            tracked.watches[name] = ThresholdWatch(limit: rule.limit, alerting: tracked.alerts.contains(name))
        }
        var events: [SensorEvent] = []
        if var monitor = tracked.air {
            monitor.take(alerting: tracked.alerts.contains(AirQualityPolicy.alertName))
            func number(_ name: String) -> Double? {
                if case .number(let value)? = tracked.attributes[name] { value } else { nil }
            }
            let reading = ParticulateReading(pm25: number("pm25"), pm10: number("pm10"), time: time)
            if reading.pm25 != nil || reading.pm10 != nil, monitor.isNew(reading), let alert = monitor.add(reading) {
                Self.follow(monitor, in: &tracked)
                events.append(airEvent(alert, &tracked, topic: topic, time: time))
            }
            tracked.air = monitor
        }
        let number = tracked.kind == .numeric ? Double(tracked.status) : nil
        return events + checkThresholds(&tracked, topic: topic, number: number, time: time)
    }

    /// The sensors with a breach whose `for:` (or least interval) is over now: a cluster's agents each tick their
    /// own in a step, under the rows, rather than every pending one every check.
    func dueThresholds(time: Timestamp) -> Set<String> {
        pendingThresholds.filter { topic in
            sensors[topic]?.watches.values.contains { watch in
                var watch = watch
                return watch.tick(at: time.millisecondsSince1970) != nil
            } ?? false
        }
    }
}
