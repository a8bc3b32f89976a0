import HubCore

/// The silencing stage's wake: a group whose firing members a silence held is sent once the silence ends.
/// (Whether an alert is silenced: `isSilenced`, `AlertBook+People`.)
extension AlertBook {
    /// Groups whose firing members a silence held: sent at once when it ends (not at the next interval).
    mutating func wakeAfterSilences(_ setup: Setup, now: Timestamp) {
        for (key, group) in groups where group.due == nil {
            let waiting = group.members.contains { id in
                guard let alert = alerts[id] else { return false }
                return alert.waitsToBeSent && !isSilenced(alert, now: now)
            }
            if waiting { groups[key]?.due = now }
        }
    }
}
