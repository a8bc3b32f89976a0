import HubCore

/// One message the alert stage sends: to each of `backends`, rendered once.
public struct AlertMessage: Sendable, Hashable {
    public enum Reason: String, Sendable, Codable {
        /// New alerts (and, with them, any that resolved or events since the last message).
        case firing
        /// Only resolved alerts.
        case resolved
        /// Still firing, and nobody acknowledged.
        case reminder
        /// An escalation step: to other backends.
        case escalation
        /// What stayed open (and happened) through quiet hours.
        case digest
        /// The storm guard: many groups at once, in one message.
        case outage
        /// Events with no pair, grouped.
        case notice
        /// Everything the group's earlier messages were about is acknowledged: backends that can take a
        /// notification back clear it (ntfy), stop its retries (Pushover) or replace it quietly (Web Push, APNs).
        case acknowledged
        /// A silence added or ended early, or a snooze taken: who, what and for how long (`AlertBook+Announcements`).
        case silence
    }

    /// Unique and stable: the same state gives the same key after a crash, so the outbox keeps one copy; it ends in
    /// the book's epoch and the message's number among all the book sent (`~3f09a1c2.17`), so it never comes again,
    /// not even from a book begun afresh.
    public var key: String
    /// The group's key: the handle a backend replaces an earlier notification by (ntfy's sequence id, a Web Push
    /// tag, an APNs collapse id).
    public var group: String
    public var rule: String
    public var reason: Reason
    public var backends: [String]
    public var title: String
    public var body: String
    public var priority: Int
    /// The newest event it is about: receivers get its fields.
    public var event: SensorEvent
    /// The alerts it is about.
    public var alerts: [String]
}

extension AlertBook {
    /// What is due at `now`: groups past their wait, silences that ended, quiet hours that ended, reminders and
    /// escalation steps. Each message's alerts are marked told.
    public mutating func tick(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        var messages: [AlertMessage] = []
        prune(now: now)
        // Something is due, or firing alerts wait unsent (a silence held them, and may have ended): the book
        // changes. Otherwise nothing is touched, and the ledger writes nothing.
        let waiting = groups.values.contains { group in
            group.due == nil
                && group.members.contains {
                    alerts[$0]?.waitsToBeSent ?? false
                }
        }
        guard waiting || nextDeadline(setup, now: now).map({ $0 <= now }) == true else { return [] }
        revision += 1
        messages += endQuietSpells(setup, now: now)
        wakeAfterSilences(setup, now: now)
        messages += sendGroups(setup, now: now)
        messages += remind(setup, now: now)
        messages += escalate(setup, now: now)
        messages += takeBack(now: now)
        messages = holdForQuietBackends(messages, setup, now: now)
        messages += endBackendSpells(setup, now: now)
        // Not held by quiet hours: a silence made in the night is known in the night (at a low priority).
        messages += announcementMessages(setup, now: now)
        // Each message's key ends in its number among all the book ever sent: a group forgotten and made again (the
        // next power cut) must not reuse a key the outbox has seen, or it would be left out as sent already. The
        // same book state gives the same numbers, so a tick replayed after a crash makes the same keys.
        // The book's epoch goes before the number: a book begun again after a loss counts from 1 again, under
        // another epoch.
        let prefix = epoch.isEmpty ? "~" : "~\(epoch)."
        for index in messages.indices { messages[index].key += "\(prefix)\(counters.messages + index + 1)" }
        counters.messages += messages.count
        for message in messages where ![.resolved, .notice, .acknowledged, .silence].contains(message.reason) {
            let firing = message.alerts.filter { alerts[$0]?.firing == true }
            guard !firing.isEmpty else { continue }
            links[ActionToken.handle(of: message.key)] = Link(
                alerts: firing, expires: now.adding(milliseconds: ActionToken.lifetime))
        }
        return messages
    }

    /// When `tick` next has something to do, if ever.
    public func nextDeadline(_ setup: Setup, now: Timestamp) -> Timestamp? {
        var times: [Timestamp] = []
        if !announcements.isEmpty { times.append(now) }
        for group in groups.values {
            if group.takeBack != nil { times.append(now) }
            if let due = group.due { times.append(due) }
            if let reminder = group.nextReminder { times.append(reminder) }
        }
        for silence in silences {
            switch silence.state(at: now) {
            case .pending: times.append(silence.startsAt)
            case .active: times.append(silence.endsAt)
            case .expired: break
            }
        }
        // A spell whose window a reload ended or moved is due now (the digest goes, or its end moves).
        for (name, spell) in quiet {
            times.append(currentQuietEnd(rule: name, setup, now: now) == spell.until ? spell.until : now)
        }
        for (backend, spell) in quietBackends {
            times.append(quietEnd(of: backend, setup, now: now) == spell.until ? spell.until : now)
        }
        for alert in alerts.values where alert.firing && alert.acknowledged == nil {
            guard let notified = alert.notified, let steps = setup.rules[alert.rule]?.alerting?.escalate,
                alert.escalated < steps.count
            else { continue }
            times.append(notified.adding(steps[alert.escalated].after))
        }
        return times.min()
    }

    // MARK: - Groups

    /// The keys of the groups `wanted` takes, in order: chosen before they are sorted, since a tick looks at every
    /// group and a storm makes thousands (sorting every key three times a tick was a fifth of a 10,000-group storm's
    /// CPU, `ONLY=storm bench/alerts.sh`).
    func groupKeys(where wanted: (Group) -> Bool) -> [String] {
        groups.compactMap { wanted($0.value) ? $0.key : nil }.sorted()
    }

    private mutating func sendGroups(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
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

    private mutating func markTold(_ firing: [Alert], backends: [String], now: Timestamp) {
        for alert in firing {
            alerts[alert.id]?.told = backends
            alerts[alert.id]?.notified = now
        }
    }

    /// After a group's message: resolved members go, notices are cleared, reminders are armed, and the group is
    /// forgotten when nothing is left in it.
    private mutating func settle(_ key: String, _ setup: Setup, now: Timestamp) {
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

    /// Groups whose firing members a silence held: sent at once when it ends (not at the next interval).
    private mutating func wakeAfterSilences(_ setup: Setup, now: Timestamp) {
        for (key, group) in groups where group.due == nil {
            let waiting = group.members.contains { id in
                guard let alert = alerts[id] else { return false }
                return alert.waitsToBeSent && !isSilenced(alert, now: now)
            }
            if waiting { groups[key]?.due = now }
        }
    }

    // MARK: - Quiet hours

    /// When the quiet window `rule` is in ends, if it is in one and its priority does not pass.
    private func quietEnd(_ rule: NotificationRule, _ policy: AlertPolicy, _ setup: Setup, now: Timestamp)
        -> Timestamp?
    {
        guard rule.priority < 5 else { return nil }
        return policy.quietHours.compactMap { setup.quietHours[$0]?.end(containing: now) }.max()
    }

    /// When the quiet window rule `name` is in ends under `setup`, if it is in one now.
    func currentQuietEnd(rule name: String, _ setup: Setup, now: Timestamp) -> Timestamp? {
        guard let rule = setup.rules[name], let policy = rule.alerting else { return nil }
        return quietEnd(rule, policy, setup, now: now)
    }

    private mutating func endQuietSpells(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        var messages: [AlertMessage] = []
        for name in quiet.keys.sorted() {
            guard let spell = quiet[name] else { continue }
            // Ended by the clock, or by a reload that took the window away or changed it (issue 52: an edit waited
            // for the old window's end).
            let current = currentQuietEnd(rule: name, setup, now: now)
            guard spell.until <= now || current != spell.until else { continue }
            quiet[name] = nil
            guard let rule = setup.rules[name], rule.alerting != nil else { continue }
            if let later = current {
                // Still quiet (another window follows at once, or the edit moved the end).
                quiet[name] = QuietSpell(until: later, notices: spell.notices)
                continue
            }
            let mine = alerts.values.filter { $0.rule == name && $0.heldBy == nil && !isSilenced($0, now: now) }
            let open = mine.filter(\.firing).sorted { $0.opened < $1.opened }
            let ended = mine.filter { !$0.firing }
            if let message = digest(rule, open: open, ended: ended, notices: spell.notices, now: now) {
                messages.append(message)
            }
            markTold(open.filter(\.told.isEmpty), backends: rule.backends, now: now)
            for key in groups.keys where groups[key]?.rule == name { settle(key, setup, now: now) }
        }
        return messages
    }

    // MARK: - Reminders and escalation

    private mutating func remind(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        var messages: [AlertMessage] = []
        for key in groupKeys(where: { $0.nextReminder.map { $0 <= now } ?? false }) {
            guard var group = groups[key], let at = group.nextReminder, at <= now,
                let rule = setup.rules[group.rule], let policy = rule.alerting
            else { continue }
            let open = group.members.compactMap { alerts[$0] }.filter {
                $0.firing && !$0.told.isEmpty && $0.acknowledged == nil && !isSilenced($0, now: now)
            }
            guard !open.isEmpty, group.reminders < policy.repeatLimit else {
                group.nextReminder = nil
                groups[key] = group
                continue
            }
            group.reminders += 1
            group.nextReminder = policy.reminderGap(group.reminders).map { now.adding($0) }
            groups[key] = group
            // In quiet hours below urgent, a reminder is skipped: the digest will say it is still open.
            if quietEnd(rule, policy, setup, now: now) != nil { continue }
            var message = reminder(group, rule, open: open, now: now)
            // An outage's reminder: one for all of it, to all it told.
            if let outage = group.outage { message.backends = outage.backends }
            messages.append(message)
        }
        return messages
    }

    /// Groups whose told alerts are all acknowledged now: one `acknowledged` message each, to the backends told.
    private mutating func takeBack(now: Timestamp) -> [AlertMessage] {
        var messages: [AlertMessage] = []
        for key in groupKeys(where: { $0.takeBack != nil }) {
            guard var group = groups[key], let acknowledgement = group.takeBack else { continue }
            group.takeBack = nil
            groups[key] = group
            let members = group.members.compactMap { alerts[$0] }.filter { $0.firing && !$0.told.isEmpty }
            guard !members.isEmpty else { continue }
            messages.append(acknowledged(group, members, acknowledgement, now: now))
        }
        return messages
    }

    private mutating func escalate(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
        var steps: [String: [Alert]] = [:]
        for (id, alert) in alerts where alert.firing && alert.acknowledged == nil {
            guard let notified = alert.notified, let policy = setup.rules[alert.rule]?.alerting,
                alert.escalated < policy.escalate.count, notified.adding(policy.escalate[alert.escalated].after) <= now,
                !isSilenced(alert, now: now)
            else { continue }
            let step = policy.escalate[alert.escalated]
            steps["\(alert.group)#\(alert.escalated)", default: []].append(alert)
            alerts[id]?.escalated += 1
            alerts[id]?.told = Array(Set(alert.told + step.backends)).sorted()
        }
        var messages: [AlertMessage] = []
        for key in steps.keys.sorted() {
            let members = steps[key]!.sorted { $0.opened < $1.opened }
            guard let rule = setup.rules[members[0].rule], let policy = rule.alerting else { continue }
            let step = policy.escalate[members[0].escalated]
            messages.append(escalation(key, rule, step, members, now: now))
        }
        return messages
    }
}
