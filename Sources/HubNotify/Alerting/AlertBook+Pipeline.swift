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
    /// What is due at `now`, stage by stage as Alertmanager's notify pipeline, each stage a file of its own: quiet
    /// hours that ended (`+QuietHours`), groups a silence held that it let go (`+Silencing`), groups past their wait
    /// or interval with the storm guard (`+Grouping`, `+Storm`), reminders and take-backs (`+Reminders`), escalation
    /// steps (`+Escalation`), backends' own quiet hours (`+QuietBackends`), and silences announced
    /// (`+Announcements`). Each message's alerts are marked told.
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
}
