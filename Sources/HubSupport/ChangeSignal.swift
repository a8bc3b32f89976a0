import Synchronization

/// Tells one waiting writer that something it shows has moved (a counter `hubctl status` prints), for the price of
/// an atomic load on the path that moves it: the bell rings once, and not again until the writer has `rearm`ed it
/// (before it reads what to show, so a change after that read rings anew).
public final class ChangeSignal: Sendable {
    private let armed = Atomic<Bool>(true)
    /// What the writer waits on (it may be rung by others too, for what they change).
    package let bell: Doorbell

    package init(bell: Doorbell = Doorbell()) { self.bell = bell }

    /// Something moved.
    public func note() {
        guard armed.load(ordering: .relaxed), armed.exchange(false, ordering: .acquiringAndReleasing) else { return }
        bell.ring()
    }

    /// The writer is about to read what to show: the next `note` rings again.
    package func rearm() { armed.store(true, ordering: .releasing) }
}
