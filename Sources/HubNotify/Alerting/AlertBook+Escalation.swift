import HubCore

/// The escalation stage: an alert nobody acknowledged goes to the next step's backends once its wait is over.
extension AlertBook {
    mutating func escalate(_ setup: Setup, now: Timestamp) -> [AlertMessage] {
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
