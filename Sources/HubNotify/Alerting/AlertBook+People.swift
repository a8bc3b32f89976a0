import Foundation
import HubCore

// What people do to the book: acknowledge, silence, expire; and what they read of it.
extension AlertBook {
    /// Marks a firing alert acknowledged: its reminders and escalation stop until it fires again. False when no
    /// such alert is firing.
    @discardableResult
    public mutating func acknowledge(_ id: String, by: String, via: String, now: Timestamp) -> Bool {
        guard var alert = alerts[id], alert.firing else { return false }
        let acknowledgement = Acknowledgement(by: by, at: now, via: via)
        alert.acknowledged = acknowledgement
        alerts[id] = alert
        revision += 1
        // The last unacknowledged alert of a group that was sent: its notifications can be taken back.
        if !alert.told.isEmpty, let group = groups[alert.group],
            !group.members.contains(where: { alerts[$0].map { $0.firing && $0.acknowledged == nil } ?? false })
        {
            groups[alert.group]?.takeBack = acknowledgement
        }
        return true
    }

    /// Adds a silence; one with the id of another replaces it (the old one expires now and stays on record).
    public mutating func add(_ silence: Silence, now: Timestamp) {
        silences.append(silence)
        revision += 1
        prune(now: now)
    }

    /// Ends a silence now; false when there is none with that id that has not ended.
    @discardableResult
    public mutating func expire(silence id: String, now: Timestamp) -> Bool {
        guard let index = silences.firstIndex(where: { $0.id == id && $0.state(at: now) != .expired }) else {
            return false
        }
        silences[index].endsAt = now
        if silences[index].startsAt > now { silences[index].startsAt = now }
        revision += 1
        return true
    }

    /// Expired silences are kept five days (as Alertmanager), then forgotten; so is what was taken an hour ago.
    mutating func prune(now: Timestamp) {
        let fiveDaysAgo = now.adding(milliseconds: -5 * 86_400_000)
        if silences.contains(where: { $0.endsAt < fiveDaysAgo }) {
            silences.removeAll { $0.endsAt < fiveDaysAgo }
            revision += 1
        }
        let hourAgo = now.adding(milliseconds: -3_600_000)
        if taken.values.contains(where: { $0.at < hourAgo }) {
            taken = taken.filter { $0.value.at >= hourAgo }
            revision += 1
        }
        // A link whose alerts have all closed acts on nothing: it goes (its token is then refused as such).
        let alerts = self.alerts
        let open = { (link: Link) in link.expires > now && link.alerts.contains { alerts[$0]?.firing == true } }
        if links.values.contains(where: { !open($0) }) {
            links = links.filter { open($0.value) }
            revision += 1
        }
    }

    /// What `hubctl status` and `/metrics` show of the book.
    public func statistics(now: Timestamp) -> AgentStatus.Alerts {
        var statistics = AgentStatus.Alerts()
        for alert in alerts.values where alert.firing {
            if alert.heldBy != nil {
                statistics.held += 1
            } else if alert.acknowledged != nil {
                statistics.acknowledged += 1
            } else {
                statistics.firing += 1
            }
        }
        statistics.silences = silences.filter { $0.state(at: now) == .active }.count
        statistics.messages = counters.messages
        statistics.outages = counters.outages
        statistics.flapped = counters.flapped + counters.heldAndClosed
        statistics.silenced = counters.silenced
        if let reset {
            statistics.resets = reset.count
            statistics.lastReset = reset.reason + (reset.keptAs.map { "; kept as \($0)" } ?? "")
            statistics.lastResetAt = Date(timeIntervalSince1970: Double(reset.at.millisecondsSince1970) / 1000)
        }
        return statistics
    }

    func isSilenced(_ alert: Alert, now: Timestamp) -> Bool {
        silences.contains { $0.silences(alert.fields, at: now) }
    }
}

extension AlertBook.Alert {
    /// Its state in words, as `hubctl alerts` and the dashboard show it.
    public var stateText: String {
        if !firing { return "resolved" }
        if let parent = heldBy { return "held (\(parent) offline)" }
        if let acknowledged { return "acknowledged \(acknowledged.spoken)" }
        return told.isEmpty ? "firing (waiting to be sent)" : "firing"
    }
}

// Why an alert waits, in words (issue 52): what the alert stage is doing must be visible where people look
// (`hubctl alerts`, the alerts page, `/api/v1/alerts`).
extension AlertBook {
    /// An alert's state and, for one not sent yet, why it waits: "in group_wait, 12 s left", "held by quiet hours
    /// 'night' until 07:00 Europe/Berlin", "held by parent gw7 (offline)", "silenced by a1b2 until 18:00", "part of
    /// outage (300 alerts)", "held: other groups are changing (a storm may be gathering)". `setup` (the
    /// configuration's) names the quiet hours; without it their window is not named.
    public func why(_ alert: Alert, _ setup: Setup?, now: Timestamp) -> String {
        let group = groups[alert.group]
        let outage = group?.outage.map { outage in
            "outage since \(Self.clock(outage.started, now: now)) (\(max(outage.told, group?.members.count ?? 0)) alerts)"
        }
        if !alert.firing {
            return group?.due == nil ? "resolved" : "resolved (its message waits for the group's interval)"
        }
        if let parent = alert.heldBy { return "held by parent \(parent) (offline)" }
        if let acknowledged = alert.acknowledged {
            return "acknowledged \(acknowledged.spoken)"
        }
        if !alert.told.isEmpty { return outage.map { "firing, told as part of \($0)" } ?? "firing" }
        if let silence = silences.first(where: { $0.silences(alert.fields, at: now) }) {
            return
                "silenced by \(silence.id) (\(Self.spoken(silence.matchers))) until \(Self.clock(silence.endsAt, now: now))"
        }
        if let setup, let rule = setup.rules[alert.rule], let policy = rule.alerting, rule.priority < 5 {
            for name in policy.quietHours {
                guard let window = setup.quietHours[name], let end = window.end(containing: now) else { continue }
                let local = Self.clock(end, now: now, zone: window.zone)
                return "held by quiet hours '\(name)' until \(local) \(window.zone.identifier) (a digest then)"
            }
        }
        if let spell = quiet[alert.rule] {
            return "held by quiet hours until \(Self.clock(spell.until, now: now)) (a digest then)"
        }
        if let outage { return "part of \(outage), its next message waiting" }
        if let held = group?.heldSince {
            let seconds = max(0, (now.millisecondsSince1970 - held.millisecondsSince1970) / 1000)
            return "held \(seconds) s: other groups are changing (a storm may be gathering)"
        }
        if let due = group?.due {
            let left = due.millisecondsSince1970 - now.millisecondsSince1970
            let interval = (group?.sent ?? 0) > 0 ? "group_interval" : "group_wait"
            return left > 0 ? "in \(interval), \(Self.spoken(left)) left" : "due now"
        }
        return "firing (waiting to be sent)"
    }
}

extension AlertBook {
    /// An alert as `hubctl alerts --json`, `hubctl alerts show --json` and `/api/v1/alerts` write it: its own fields
    /// and `state` (`why`), keys sorted.
    /// Whether `silence` would hold `alert` now (a silence's preview).
    public func silenced(_ alert: Alert, by silence: Silence, at now: Timestamp) -> Bool {
        silence.silences(alert.fields, at: now)
    }

    public func json(_ alerts: [Alert], _ setup: Setup?, now: Timestamp) -> Data {
        let encoder = JSONEncoder()
        var list: [Any] = []
        for alert in alerts {
            guard var object = (try? JSONSerialization.jsonObject(with: encoder.encode(alert))) as? [String: Any]
            else { continue }
            object["state"] = why(alert, setup, now: now)
            object["spoken"] = alert.spoken(now: now)
            // What a page needs to put the most urgent first and undo a snooze.
            object["priority"] = setup?.rules[alert.rule]?.priority ?? 3
            object["silencedBy"] = silences.filter { $0.silences(alert.fields, at: now) }.map(\.id)
            list.append(object)
        }
        return (try? JSONSerialization.data(withJSONObject: list, options: [.sortedKeys, .prettyPrinted])) ?? Data()
    }
}

extension AlertBook.Acknowledgement {
    /// Who and how, as a person reads it: "by ana via web", "by Pushover (pixel) via phone"; "via ntfy" or "from a
    /// notification's link" when only the way is known (the ntfy app's button, a link opened in a browser that is
    /// not logged in), not "by ntfy via ntfy".
    public var spoken: String {
        if by == via { return via == "link" ? "from a notification's link" : "via \(via)" }
        return "by \(by) via \(via)"
    }
}

extension AlertBook.Alert {
    /// The alert as a person names it: "front door open · hall, since 21:04", "kitchen leak: leak" (its room when it
    /// has one), for the dashboard's banner and a notification's acknowledge page, never its id.
    public func spoken(now: Timestamp) -> String {
        let room = labels["room"].map { " · \($0)" } ?? ""
        let since = AlertBook.clock(opened, now: now)
        let status = event.newStatus
        // "kitchen leak: leak", not "kitchen leak leak".
        let repeats = sensor.lowercased().split(separator: " ").last.map(String.init) == status.lowercased()
        return "\(sensor)\(repeats ? ":" : "") \(status)\(room), since \(since)"
    }
}
