import DequeModule
import HubSupport

/// When the publishes waiting for the broker's answer give up, kept for the network thread to enforce: its poll
/// waits no longer than the earliest, and each pass expires those past (`expire(now:)`). A timer per publish cost a
/// task and a dispatch timer, and the thread switches to arm, fire and cancel them: about as much as the publish
/// itself (issue 54).
///
/// A deadline is added before the publish wakes the network thread, so the pass that writes the packet already
/// waits for it; while the connection is down, the reconnect back-off keeps them too (`waitOut`).
final class Deadlines: Sendable {
    private struct Entry {
        let token: UInt64
        let at: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        /// By `at`: one timeout for most operations, so each new one usually goes last.
        var entries = Deque<Entry>()
        var next: UInt64 = 0
    }

    private let state = Locked(State())

    /// Adds a deadline; `expire` runs on the network thread once it has passed, unless `remove`d first. Returns what
    /// `remove` takes.
    func add(at instant: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            state.next &+= 1
            var index = state.entries.endIndex
            while index > state.entries.startIndex && state.entries[index - 1].at > instant { index -= 1 }
            state.entries.insert(Entry(token: state.next, at: instant, expire: expire), at: index)
            return state.next
        }
    }

    /// Forgets a deadline: its operation has its answer. Answers come mostly in order, so it is near the front.
    func remove(_ token: UInt64) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.token == token }) { state.entries.remove(at: index) }
        }
    }

    /// The earliest deadline kept.
    var earliest: ContinuousClock.Instant? { state.withLock { $0.entries.first?.at } }

    /// Runs the expiries of the deadlines up to `now` and forgets them.
    func expire(now: ContinuousClock.Instant = .now) {
        let past = state.withLock { state -> [Entry] in
            var past: [Entry] = []
            while let first = state.entries.first, first.at <= now { past.append(state.entries.removeFirst()) }
            return past
        }
        for entry in past { entry.expire() }
    }
}
