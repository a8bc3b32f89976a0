import HubCore

/// The quiet-hours stage: a rule in a quiet window sends nothing; when the window ends, one digest of what stayed
/// open and what happened. (A backend's own quiet hours: `AlertBook+QuietBackends`.)
extension AlertBook {
    /// When the quiet window `rule` is in ends, if it is in one and its priority does not pass.
    func quietEnd(_ rule: NotificationRule, _ policy: AlertPolicy, _ setup: Setup, now: Timestamp)
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

    mutating func endQuietSpells(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
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
}
