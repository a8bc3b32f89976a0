import HubCore

// The storm guard, judged over time (issue 52). A power cut reaches the hub as the sensors' wills, which the broker
// publishes as each one's keepalive runs out: over seconds, not in one batch. So a storm is recognised by the
// changes (alerts opened or closed, events with no pair) across all groups within `storm_window`, not by what falls
// due in one tick:
//
// - More than `alerts.storm` changes within the window, with more than one group concerned: the alerts waiting in
//   every group (due or not) join one **outage** group and go as one message, "Outage: 300 alerts". While the storm
//   goes on (and for `storm_window` after the outage began) new alerts join it too.
// - The outage's later messages ("Outage: 300 alerts, 12 back", "Outage over: 300 back") wait until the storm is
//   calm (no change for `quiet`, 10 s) and its group_interval has passed, and at most `storm_window` after its last:
//   one update for the cut, one for the return, however the wills and the returns are spread.
// - A group due while a storm gathers (at least half the limit changed within the window) and other groups are still
//   changing (within `quiet`) is held, a second at a time, until they are calm or a storm is recognised, and at most
//   `storm_window`: the first alert of a storm never goes alone.
//
// The outage is a group like any other (`Group.outage` says so): its reminders, escalation, acknowledgement and
// take-back are one each, not one per sensor.
extension AlertBook {
    /// No change for this long: the storm is calm (an outage's update may go; a held group may go). Mosquitto 2.0
    /// gives up clients whose keepalive ran out in batches about 5 s apart (measured in `StormHubTests`: 300 wills at
    /// 0 s, 6 s and 11 s), so the quiet must be longer than that gap.
    static let stormQuiet: Int64 = 10_000

    /// An outage in progress: what its messages count.
    struct Outage: Sendable, Hashable, Codable {
        var started: Timestamp
        /// When an alert last joined it.
        var lastJoin: Timestamp
        /// Alerts told firing through it, and those of them back since.
        var told = 0
        var back = 0
        /// Where its messages go: every joined alert's rule's backends.
        var backends: [String] = []
    }

    /// Notes a change at `now`, and forgets those older than any window.
    mutating func noteChange(now: Timestamp) {
        recent[now.millisecondsSince1970 / 1000, default: 0] += 1
        if recent.count > 7_200 { forgetChanges(before: now.adding(milliseconds: -3_600_000)) }
    }

    mutating func forgetChanges(before: Timestamp) {
        let second = before.millisecondsSince1970 / 1000
        if recent.keys.contains(where: { $0 < second }) { recent = recent.filter { $0.key >= second } }
    }

    /// Changes since `time` (to the second).
    func changes(since time: Timestamp) -> Int {
        let second = time.millisecondsSince1970 / 1000
        return recent.reduce(0) { $1.key >= second ? $0 + $1.value : $0 }
    }

    /// The window a storm is judged over: `storm_window`, and never shorter than a rule's `group_wait`.
    func stormWindow(_ setup: Setup) -> Int64 {
        let waits = setup.rules.values.compactMap { $0.alerting?.groupWait }
        let longest = waits.map { Int64($0.components.seconds) * 1000 }.max() ?? 0
        return max(Int64(setup.stormWindow.components.seconds) * 1000, longest)
    }

    func isStormy(_ setup: Setup, now: Timestamp) -> Bool {
        changes(since: now.adding(milliseconds: -stormWindow(setup))) > setup.storm
    }

    /// A storm may be gathering: at least half the storm limit changed within the window. Below that a group is
    /// not held (two unrelated alerts go at their group_wait), nor with the guard turned off (a huge limit).
    func isGathering(_ setup: Setup, now: Timestamp) -> Bool {
        changes(since: now.adding(milliseconds: -stormWindow(setup))) * 2 >= setup.storm
    }

    func isCalm(now: Timestamp) -> Bool {
        changes(since: now.adding(milliseconds: -Self.stormQuiet)) == 0
    }

    /// A group's own changes since `time`: its alerts opened or closed since, its notices since.
    func ownChanges(_ group: Group, since time: Timestamp) -> Int {
        let second = time.millisecondsSince1970 / 1000
        let recent = { (stamp: Timestamp) in stamp.millisecondsSince1970 / 1000 >= second }
        var count = group.notices.filter { recent($0.time) }.count
        for id in group.members {
            guard let alert = alerts[id] else { continue }
            if recent(alert.opened) { count += 1 }
            if let resolved = alert.resolved, recent(resolved) { count += 1 }
        }
        return count
    }

    /// Whether other groups than `group` changed within the quiet time: a storm may be gathering.
    func othersChanging(_ group: Group, now: Timestamp) -> Bool {
        let since = now.adding(milliseconds: -Self.stormQuiet)
        return changes(since: since) > ownChanges(group, since: since)
    }

    /// Whether a storm concerns more than one group (one alone is its own message): the due groups `due` and any
    /// other with an alert waiting to be sent. Looked at only in a storm (it reads every group).
    func spansGroups(_ due: [String]) -> Bool {
        let changed = due.filter { key in
            groups[key]?.members.contains { alerts[$0].map { $0.waitsToBeSent || !$0.firing } ?? false } ?? false
        }
        if changed.count > 1 { return true }
        guard !changed.isEmpty else { return false }
        return groups.contains { key, group in
            !changed.contains(key) && group.outage == nil
                && group.members.contains { alerts[$0]?.waitsToBeSent == true }
        }
    }

    /// The outage group still taking in alerts: one that began within the window, or while the storm goes on.
    func absorbingOutage(_ setup: Setup, stormy: Bool, now: Timestamp) -> String? {
        let window = stormWindow(setup)
        return groups.values.filter { group in
            guard let outage = group.outage else { return false }
            return stormy || now.millisecondsSince1970 - outage.lastJoin.millisecondsSince1970 < window
        }.max { $0.key < $1.key }?.key
    }

    /// Moves alert `id` into group `key` (an outage), out of the group it was in (forgotten if left empty).
    mutating func move(_ id: String, to key: String) {
        guard var alert = alerts[id], alert.group != key else { return }
        if var old = groups[alert.group] {
            old.members.removeAll { $0 == id }
            groups[alert.group] = old.members.isEmpty && old.notices.isEmpty ? nil : old
        }
        alert.group = key
        alerts[id] = alert
        groups[key]?.members.append(id)
    }

    /// Takes the storm's alerts into an outage group: every group's firing alerts not sent yet (due or not) and the
    /// due groups' resolved ones and notices. Returns the outage group's key; it is due now if it has not sent yet.
    mutating func gatherOutage(
        into existing: String?, due: [String], _ setup: Setup, now: Timestamp
    ) -> String {
        let key = existing ?? "outage@\(now.millisecondsSince1970)"
        if groups[key] == nil {
            // The first rule concerned lends its policy (interval, reminders) to the outage.
            let rule = due.compactMap { groups[$0]?.rule }.first ?? setup.rules.keys.sorted().first ?? ""
            var group = Group(key: key, rule: rule)
            group.outage = Outage(started: now, lastJoin: now)
            groups[key] = group
            counters.outages += 1
        }
        let dueSet = Set(due)
        for groupKey in groups.keys.sorted() where groupKey != key {
            guard let group = groups[groupKey], group.outage == nil else { continue }
            let isDue = dueSet.contains(groupKey)
            for id in group.members {
                guard let alert = alerts[id] else { continue }
                let waiting = alert.waitsToBeSent && !isSilenced(alert, now: now)
                let returned = isDue && !alert.firing
                guard waiting || returned else { continue }
                let backends = waiting ? (setup.rules[alert.rule]?.backends ?? []) : alert.told
                move(id, to: key)
                for backend in backends where groups[key]?.outage?.backends.contains(backend) == false {
                    groups[key]?.outage?.backends.append(backend)
                }
                groups[key]?.outage?.lastJoin = now
            }
            if isDue, var left = groups[groupKey] {
                groups[key]?.notices += left.notices
                left.notices = []
                left.due = nil
                groups[groupKey] = left.members.isEmpty ? nil : left
            }
        }
        if var outage = groups[key], outage.sent == 0 || outage.due == nil {
            outage.due = outage.sent == 0 ? now : outage.due
            if outage.sent > 0, let policy = setup.rules[outage.rule]?.alerting {
                outage.due = (outage.lastSent ?? now).adding(policy.groupInterval)
            }
            groups[key] = outage
        }
        return key
    }

    /// The outage group's message: "Outage: 300 alerts", then "Outage: 300 alerts, 12 back", "Outage over: 300 back".
    mutating func outageMessage(
        _ key: String, _ rule: NotificationRule, firing: [Alert], resolved: [Alert], notices: [SensorEvent],
        _ setup: Setup, now: Timestamp
    ) -> AlertMessage? {
        guard var group = groups[key], var outage = group.outage else { return nil }
        outage.told += firing.count
        outage.back += resolved.count
        group.outage = outage
        groups[key] = group
        let open = group.members.compactMap { alerts[$0] }.filter { $0.firing }.sorted { $0.opened < $1.opened }
        let firing = firing.sorted { $0.opened < $1.opened }
        let resolved = resolved.sorted { $0.opened < $1.opened }
        guard let event = notices.last ?? Self.newest(firing) ?? Self.newest(resolved) ?? Self.newest(open) else {
            return nil
        }
        let title: String
        if open.isEmpty {
            title = "Outage over: \(outage.back) back"
        } else if group.sent == 0 {
            title = "Outage: \(outage.told) alerts"
        } else {
            title = "Outage: \(outage.told) alerts" + (outage.back > 0 ? ", \(outage.back) back" : "")
        }
        var lines: [String] = []
        if !open.isEmpty { lines.append("\(Self.headline(open, rule: group.rule)): \(Self.names(open))") }
        if !resolved.isEmpty { lines.append("Back: \(Self.names(resolved))") }
        if !notices.isEmpty { lines.append("Events: \(Self.names(notices.map { "\($0.sensor) \($0.newStatus)" }))") }
        let priority = Set((open + resolved).map(\.rule)).compactMap { setup.rules[$0]?.priority }.max()
        // Its buttons act on everything open in it.
        return AlertMessage(
            key: "\(key)#\(group.sent)", group: key, rule: rule.name, reason: .outage,
            backends: outage.backends, title: title, body: lines.joined(separator: "\n"),
            priority: priority ?? rule.priority, event: event, alerts: (open + resolved).map(\.id))
    }
}
