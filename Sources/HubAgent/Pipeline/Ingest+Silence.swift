import HubCore
import HubSupport

/// When a hub on its own looks for silent sensors: at the earliest silence deadline, not on a timer. A hub whose
/// sensors all report on time (or have no silence timeout) sleeps; it used to wake four times a second to find
/// nothing (issue 38's idle goal). While a threshold waits for its `for:` or a session for its gap, it looks every
/// quarter second as before; never more often than that. (A cluster's agents keep the quarter-second cadence: their
/// checks are steps in the database, `Ingest+Cluster.swift`.)
extension Ingest {
    /// The check's plan: guarded by the tracker's lock (taken inside it), so a change and the plan it is compared
    /// with can't cross.
    struct SilencePlan {
        /// When the watch will look next; nil while it waits for a change.
        var planned: ContinuousClock.Instant?
        var lastCheck = ContinuousClock.now
    }

    static let silenceCadence = Duration.milliseconds(250)

    /// Runs `body` on the tracker; wakes the silence watch when the tracker needs a look before the one planned (a
    /// sensor's first deadline, a threshold now pending).
    func changeTracker<T>(_ body: (inout SensorTracker) -> T) -> T {
        tracker.withLock { tracker in
            let result = body(&tracker)
            guard let next = tracker.nextCheck(now: .now) else { return result }
            let wake = silencePlan.withLock { plan -> Bool in
                let due = max(next, plan.lastCheck + Self.silenceCadence)
                guard plan.planned.map({ due < $0 }) ?? true else { return false }
                plan.planned = due
                return true
            }
            if wake { silenceBell.ring() }
            return result
        }
    }

    /// Until cancelled: checks for silence when the tracker says something is due.
    func watchSilence() async {
        while !Task.isCancelled {
            let next = tracker.withLock { tracker in
                silencePlan.withLock { plan in
                    plan.planned = tracker.nextCheck(now: .now).map { max($0, plan.lastCheck + Self.silenceCadence) }
                    return plan.planned
                }
            }
            await silenceBell.wait(until: next)
            guard !Task.isCancelled else { return }
            // Rung for a later look than the clock says now: plan again (the ring may be for an earlier change).
            if let planned = silencePlan.withLock({ $0.planned }), planned > .now { continue }
            silencePlan.withLock { $0.lastCheck = .now }
            checkSilence()
        }
    }
}

extension SensorTracker {
    /// When `checkSilence` next has something to do: `now` while a threshold's `for:` or a session's gap is pending
    /// (they are ticked at each check), else the earliest silence deadline; nil when nothing is pending.
    func nextCheck(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if !pendingThresholds.isEmpty || !gapSessions.isEmpty { return now }
        return nextSilenceDeadline
    }
}
