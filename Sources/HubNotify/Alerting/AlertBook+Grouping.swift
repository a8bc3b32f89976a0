import HubCore

/// The grouping stage: groups past their wait (or their interval) send one message for their new, resolved and
/// noticed alerts, the storm guard gathering them into one outage (`AlertBook+Storm`); then each group settles.
extension AlertBook {
    /// The keys of the groups `wanted` takes, in order: chosen before they are sorted, since a tick looks at every
    /// group and a storm makes thousands (sorting every key three times a tick was a fifth of a 10,000-group storm's
    /// CPU, `ONLY=storm bench/alerts.sh`).
    func groupKeys(where wanted: (Group) -> Bool) -> [String] {
        groups.compactMap { wanted($0.value) ? $0.key : nil }.sorted()
    }

    mutating func sendGroups(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        typealias Due = (key: String, firing: [Alert], resolved: [Alert], notices: [SensorEvent])
        forgetChanges(before: now.adding(milliseconds: -stormWindow(setup)))
        var due: [Due] = []
        for key in groupKeys(where: { $0.due.map { $0 <= now } ?? false }) {
            guard let group = groups[key], let rule = setup.rules[group.rule], let policy = rule.alerting else {
                continue
            }
            guard let at = group.due, at <= now else { continue }
            if let spell = quietEnd(rule, policy, setup, now: now) {
                // Quiet: everything waits for the digest, which `endQuietSpells` sends when the window ends.
                quiet[rule.name, default: QuietSpell(until: spell)].notices += group.notices
                groups[key]?.notices = []
                groups[key]?.due = nil
                continue
            }
            let members = group.members.compactMap { alerts[$0] }
            let firing = members.filter(\.waitsToBeSent)
            let silenced = firing.filter { isSilenced($0, now: now) }
            counters.silenced += silenced.count
            let sendable = firing.filter { !isSilenced($0, now: now) }
            // A resolved message goes even while silenced: whoever was told it was firing hears it ended.
            let resolved = members.filter { !$0.firing }
            due.append((key, sendable, resolved, group.notices))
            groups[key]?.due = nil
        }
        let changes = due.reduce(0) { $0 + $1.firing.count + $1.resolved.count }
        guard changes > 0 || due.contains(where: { !$0.notices.isEmpty }) else {
            for item in due { settle(item.key, setup, now: now) }
            return []
        }

        // The storm guard (`AlertBook+Storm`): a storm, or an outage still taking alerts in, gathers every group's
        // waiting alerts into the outage; otherwise a group due while others still change waits for them.
        let stormy = isStormy(setup, now: now)
        let plain = due.filter { groups[$0.key]?.outage == nil }
        let absorbing = absorbingOutage(setup, stormy: stormy, now: now)
        if !plain.isEmpty, absorbing != nil || (stormy && spansGroups(plain.map(\.key))) {
            let key = gatherOutage(into: absorbing, due: plain.map(\.key), setup, now: now)
            due.removeAll { groups[$0.key]?.outage == nil }
            if let group = groups[key], let at = group.due, at <= now, !due.contains(where: { $0.key == key }) {
                let members = group.members.compactMap { alerts[$0] }
                due.append(
                    (
                        key, members.filter { $0.waitsToBeSent && !isSilenced($0, now: now) },
                        members.filter { !$0.firing }, group.notices
                    ))
                groups[key]?.due = nil
            }
        }
        let window = stormWindow(setup)
        var messages: [AlertMessage] = []
        for item in due {
            guard var group = groups[item.key], let rule = setup.rules[group.rule] else { continue }
            // Held: a plain group while others change, an outage's update until the storm is calm; never longer
            // than a storm window.
            let held: Bool
            if group.outage != nil {
                let last = group.lastSent?.millisecondsSince1970 ?? now.millisecondsSince1970
                held = group.sent > 0 && !isCalm(now: now) && now.millisecondsSince1970 - last < window
            } else {
                let since = group.heldSince ?? now
                held =
                    !stormy && isGathering(setup, now: now) && othersChanging(group, now: now)
                    && now.millisecondsSince1970 - since.millisecondsSince1970 < window
            }
            if held {
                group.heldSince = group.heldSince ?? now
                group.due = now.adding(milliseconds: 1000)
                groups[item.key] = group
                continue
            }
            let message: AlertMessage?
            if group.outage != nil {
                message = outageMessage(
                    item.key, rule, firing: item.firing, resolved: item.resolved, notices: item.notices, setup,
                    now: now)
                markTold(item.firing, backends: groups[item.key]?.outage?.backends ?? rule.backends, now: now)
            } else {
                let alsoFiring = group.members.compactMap { alerts[$0] }.filter {
                    $0.firing && !$0.told.isEmpty && $0.heldBy == nil && $0.acknowledged == nil
                        && !isSilenced($0, now: now)
                }
                message = groupMessage(
                    item.key, rule, firing: item.firing, alsoFiring: alsoFiring, resolved: item.resolved,
                    notices: item.notices, now: now)
                markTold(item.firing, backends: rule.backends, now: now)
            }
            if let message { messages.append(message) }
            settle(item.key, setup, now: now)
        }
        return messages
    }

    mutating func markTold(_ firing: [Alert], backends: [String], now: Timestamp) {
        for alert in firing {
            alerts[alert.id]?.told = backends
            alerts[alert.id]?.notified = now
        }
    }

    /// After a group's message: resolved members go, notices are cleared, reminders are armed, and the group is
    /// forgotten when nothing is left in it.
    mutating func settle(_ key: String, _ setup: Setup, now: Timestamp) {
        guard var group = groups[key] else { return }
        for id in group.members where alerts[id]?.firing == false { alerts[id] = nil }
        group.members.removeAll { alerts[$0] == nil }
        group.notices = []
        group.lastSent = now
        group.sent += 1
        group.heldSince = nil
        let open = group.members.contains { alerts[$0]?.told.isEmpty == false }
        if !open {
            group.reminders = 0
            group.nextReminder = nil
        } else if group.nextReminder == nil, let gap = setup.rules[group.rule]?.alerting?.reminderGap(0) {
            group.reminders = 0
            group.nextReminder = now.adding(gap)
        }
        groups[key] = group.members.isEmpty ? nil : group
    }
}
