/// Wakes waiting tasks when there is work; a ring with nobody waiting is remembered for the next wait, so none
/// is lost between checking for work and waiting.
package final class Doorbell: Sendable {
    private let state = Locked(State())

    struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0

        /// Whether a ring came since the last wait; taken if so.
        mutating func takeRing() -> Bool {
            defer { pending = false }
            return pending
        }
    }

    package init() {}

    package func ring() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.waiters.isEmpty { state.pending = true }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns on a ring, at `deadline`, or when the task is cancelled.
    package func wait(until deadline: ContinuousClock.Instant?) async {
        // Rung since the last wait: no child tasks and no timer (a bell rung more often than it is waited on, as
        // the status file's writer's was at every message, made two tasks and a timer for a ring already there).
        if state.withLock({ $0.takeRing() }) { return }
        // Without a deadline, no child tasks: a wait per routed batch made two tasks and a timer (issue 38).
        guard let deadline else { return await waitForRing() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForRing() }
            group.addTask { try? await Task.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns on a ring (at once when one came since the last wait), or when the task is cancelled.
    private func waitForRing() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = self.state.withLock { state -> Bool in
                    if state.takeRing() || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
