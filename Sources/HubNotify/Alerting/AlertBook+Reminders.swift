import HubCore

/// The reminder stage: a group's firing, unacknowledged alerts again at the rule's `repeat` gaps; and the
/// acknowledgement's take-back, which tells backends that can clear a notification to clear it.
extension AlertBook {
    mutating func remind(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
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
    mutating func takeBack(now: Timestamp) -> [AlertMessage] {
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
}
