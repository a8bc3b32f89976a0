/// Opens once and stays open: what any number of tasks wait for, each with a deadline of its own.
package final class Latch: Sendable {
    private let opened = Locked(false)
    private let bell = Doorbell()

    package init() {}

    package func open() {
        opened.withLock { $0 = true }
        bell.ring()
    }

    package var isOpen: Bool { opened.withLock { $0 } }

    /// Returns once open, at `deadline`, or when the task is cancelled; whether it is open.
    @discardableResult
    package func wait(until deadline: ContinuousClock.Instant) async -> Bool {
        while !isOpen && ContinuousClock.now < deadline && !Task.isCancelled {
            await bell.wait(until: min(deadline, .now + .milliseconds(100)))
        }
        return isOpen
    }
}
