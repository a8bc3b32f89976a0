import HubCore

// What the alert stage's messages say: one alert reads as its rule's template always did; several are named in one
// message ("9 sensors offline: shed, garage temperature, …").
extension AlertBook {
    /// Names, at most ten, then how many more.
    static func names(_ alerts: [Alert]) -> String {
        names(alerts.map(\.sensor))
    }

    static func names(_ names: [String]) -> String {
        let shown = names.prefix(10).joined(separator: ", ")
        return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
    }

    /// "9 sensors offline", "3 sensors open", or "4 alerts (doors)".
    static func headline(_ alerts: [Alert], rule: String) -> String {
        let count = alerts.count
        let noun = count == 1 ? "sensor" : "sensors"
        if alerts.allSatisfy({ $0.kind == "offline" }) { return "\(count) \(noun) offline" }
        if let status = alerts.first?.event.newStatus, alerts.allSatisfy({ $0.event.newStatus == status }) {
            return "\(count) \(noun) \(status)"
        }
        return "\(count) \(count == 1 ? "alert" : "alerts") (\(rule))"
    }

    static func newest(_ alerts: [Alert]) -> SensorEvent? {
        alerts.max { $0.event.time < $1.event.time }?.event
    }

    /// A group's message. When new alerts fire, it names those told before and still firing too (`alsoFiring`):
    /// the message replaces the group's earlier one on the phone (ntfy, Web Push, APNs, chat edits), so it must say
    /// the whole of what is firing, as Alertmanager's do.
    func groupMessage(
        _ key: String, _ rule: NotificationRule, firing: [Alert], alsoFiring: [Alert] = [], resolved: [Alert],
        notices: [SensorEvent], now: Timestamp
    ) -> AlertMessage? {
        let sent = groups[key]?.sent ?? 0
        let firing = (firing.isEmpty ? [] : alsoFiring + firing).sorted { $0.opened < $1.opened }
        let resolved = resolved.sorted { $0.opened < $1.opened }
        // Nothing to say: a silence holds its new alerts, and another group due in the same tick sends.
        guard let event = notices.last ?? firing.last?.event ?? resolved.last?.event else { return nil }
        var message = AlertMessage(
            key: "\(key)#\(sent)", group: key, rule: rule.name, reason: .firing, backends: rule.backends, title: "",
            body: "", priority: rule.priority, event: event, alerts: (firing + resolved).map(\.id))
        switch (firing.count, resolved.count, notices.count) {
        case (1, 0, 0), (0, 1, 0):
            let alert = firing.first ?? resolved[0]
            (message.title, message.body) = rule.render(alert.event, id: alert.event.id)
            message.event = alert.event
        case (0, 0, 1):
            (message.title, message.body) = rule.render(notices[0], id: notices[0].id)
        case (0, _, 0):
            message.title = "\(Self.headline(resolved, rule: rule.name)) no more"
            if resolved.allSatisfy({ $0.kind == "offline" }) {
                message.title = "\(resolved.count) sensors back"
            }
            message.body = Self.names(resolved)
        default:
            var lines: [String] = []
            if !firing.isEmpty {
                message.title = Self.headline(firing, rule: rule.name)
                lines.append(Self.names(firing))
            } else if !resolved.isEmpty {
                message.title = "\(resolved.count) resolved (\(rule.name))"
            } else {
                message.title = "\(notices.count) events (\(rule.name))"
            }
            if !resolved.isEmpty { lines.append("Resolved: \(Self.names(resolved))") }
            if !notices.isEmpty {
                lines.append(Self.names(notices.map { "\($0.sensor) \($0.newStatus)" }))
            }
            message.body = lines.joined(separator: "\n")
        }
        if firing.isEmpty {
            message.reason = notices.isEmpty ? .resolved : .notice
            // Only those told it was firing hear it ended.
            let told = Set(resolved.flatMap(\.told))
            message.backends =
                notices.isEmpty
                ? rule.backends.filter(told.contains) + told.subtracting(rule.backends).sorted() : rule.backends
        }
        return message
    }

    func digest(
        _ rule: NotificationRule, open: [Alert], ended: [Alert], notices: [SensorEvent], now: Timestamp
    ) -> AlertMessage? {
        guard let event = notices.last ?? Self.newest(open) ?? Self.newest(ended) else { return nil }
        var lines: [String] = []
        if !open.isEmpty { lines.append("Open: \(Self.names(open))") }
        if !ended.isEmpty { lines.append("Resolved: \(Self.names(ended))") }
        if !notices.isEmpty { lines.append("Events: \(Self.names(notices.map { "\($0.sensor) \($0.newStatus)" }))") }
        return AlertMessage(
            key: "\(rule.name)#digest@\(now.millisecondsSince1970 / 60_000)", group: "\(rule.name)#digest",
            rule: rule.name, reason: .digest, backends: rule.backends,
            title: open.isEmpty ? "While quiet (\(rule.name))" : "While quiet: \(Self.headline(open, rule: rule.name))",
            body: lines.joined(separator: "\n"), priority: rule.priority, event: event,
            alerts: (open + ended).map(\.id))
    }

    func reminder(_ group: Group, _ rule: NotificationRule, open: [Alert], now: Timestamp) -> AlertMessage {
        let open = open.sorted { $0.opened < $1.opened }
        let since = open[0].notified ?? open[0].opened
        let length = Self.spoken(now.millisecondsSince1970 - since.millisecondsSince1970)
        return AlertMessage(
            key: "\(group.key)#r\(group.reminders)", group: group.key, rule: rule.name, reason: .reminder,
            backends: rule.backends, title: "Still \(Self.headline(open, rule: rule.name))",
            body: "\(Self.names(open)) — open for \(length), not acknowledged", priority: rule.priority,
            event: Self.newest(open)!, alerts: open.map(\.id))
    }

    func acknowledged(_ group: Group, _ alerts: [Alert], _ by: Acknowledgement, now: Timestamp) -> AlertMessage {
        let alerts = alerts.sorted { $0.opened < $1.opened }
        return AlertMessage(
            key: "\(group.key)#a\(by.at.millisecondsSince1970)", group: group.key, rule: group.rule,
            reason: .acknowledged,
            backends: Array(Set(alerts.flatMap(\.told))).sorted(),
            title: "Acknowledged: \(Self.headline(alerts, rule: group.rule))",
            body: "\(Self.names(alerts)) — acknowledged \(by.spoken)", priority: 1,
            event: Self.newest(alerts)!, alerts: alerts.map(\.id))
    }

    func escalation(
        _ key: String, _ rule: NotificationRule, _ step: AlertPolicy.Escalation, _ alerts: [Alert], now: Timestamp
    ) -> AlertMessage {
        let length = Self.spoken(Int64(step.after.components.seconds) * 1000)
        return AlertMessage(
            key: "\(alerts[0].id)#e\(alerts[0].escalated)", group: alerts[0].group, rule: rule.name,
            reason: .escalation, backends: step.backends,
            title: "Not acknowledged for \(length): \(Self.headline(alerts, rule: rule.name))",
            body: Self.names(alerts), priority: max(rule.priority, 4), event: Self.newest(alerts)!,
            alerts: alerts.map(\.id))
    }
}
