import HubSupport

/// The message a chat backend (Telegram, Matrix) last sent for each alert group, by the group's `replaceHandle`: what
/// a later message of the group edits instead of sending another.
///
/// Kept in memory only, for the last 1,000 groups: after a restart (or a reload that makes the backend anew) a group's
/// next message is a new one, which is what a backend without edits does anyway; nothing is lost but the tidiness.
///
/// What edits and what is sent anew:
/// - `firing` (members joined, or some resolved): edits the group's message. The book's update names everything
///   still firing and unacknowledged in the group, not only what changed ("2 sensors wet: kitchen, bathroom"), so
///   the edit loses nothing but what resolved or was acknowledged. Telegram and Matrix edit silently: the phone is
///   not woken again, which is what reminders are for.
/// - `resolved`: a new message, and the group is forgotten. An edit is silent on most clients, and whoever was woken
///   by the alert must also hear that it ended (Alertmanager sends a resolved notification as a message of its own);
///   the next firing of the group starts a new message too.
/// - `reminder` and `escalation`: new messages, since they exist to notify; each becomes the group's message that
///   later updates edit (the newest one is what the person sees first).
/// - `digest`, `outage`, `notice` (and any other): new messages that no group update edits.
final class GroupMessages<ID: Sendable>: Sendable {
    fileprivate struct State {
        var ids: [String: (id: ID, serial: Int)] = [:]
        var serial = 0
    }

    fileprivate let state = Locked(State())
    let capacity: Int

    init(capacity: Int = 1_000) {
        self.capacity = capacity
    }

    /// The group's earlier message `notification` should edit, or `nil` to send a new message.
    func target(of notification: Notification) -> ID? {
        guard let alert = notification.alert, Self.edits(alert.reason) else { return nil }
        return state.withLock { state in
            state.ids[alert.replaceHandle]?.id
        }
    }

    /// The group's message, whatever `notification` is (an acknowledgement takes its buttons off).
    func message(of notification: Notification) -> ID? {
        guard let handle = notification.alert?.replaceHandle else { return nil }
        return state.withLock { $0.ids[handle]?.id }
    }

    /// After an edit: the group's message now names what `notification` names.
    func edited(_ id: ID, for notification: Notification) {
        guard let alert = notification.alert else { return }
        remember(id, alert)
    }

    /// Whether a message sent for this reason edits the group's earlier message, when there is one.
    static func edits(_ reason: AlertMessage.Reason) -> Bool {
        reason == .firing
    }

    /// After a new message `id` was sent for `notification`: the group's message from now on (or, for a resolved
    /// message, none).
    func sent(_ id: ID, for notification: Notification) {
        guard let alert = notification.alert else { return }
        switch alert.reason {
        case .resolved: forget(notification)
        case .firing, .reminder, .escalation: remember(id, alert)
        default: break
        }
    }

    /// The group's message could not be edited (deleted, too old): its next message is a new one.
    func forget(_ notification: Notification) {
        guard let handle = notification.alert?.replaceHandle else { return }
        _ = state.withLock { $0.ids.removeValue(forKey: handle) }
    }

    private func remember(_ id: ID, _ alert: Notification.AlertContext) {
        state.withLock { state in
            state.serial += 1
            state.ids[alert.replaceHandle] = (id, state.serial)
            guard state.ids.count > capacity else { return }
            // The group written longest ago goes (a scan of 1,000 entries, only when full).
            if let oldest = state.ids.min(by: { $0.value.serial < $1.value.serial })?.key {
                state.ids.removeValue(forKey: oldest)
            }
        }
    }

    var count: Int { state.withLock { $0.ids.count } }
}

extension GroupMessages where ID: Equatable {
    /// Forgets the group whose message is `id` (a button pressed on it took its buttons off).
    func forget(message id: ID) {
        state.withLock { state in
            if let handle = state.ids.first(where: { $0.value.id == id })?.key { state.ids.removeValue(forKey: handle) }
        }
    }
}
