import Dispatch
import HubCore

/// A routing pass: the events waiting in the inbox become notifications, written to the outbox and queued for their
/// backends. Passes run one at a time on the pipeline's executor; in a hub on its own the journal's commit runs one
/// for the batch it wrote (`submit`), and the routing loop one for the alert book's timers, people's requests and
/// reloads.
extension NotificationRouter {
    /// Routes every waiting event: on the executor (`routeLocal`), or in a cluster into its outbox (`routeShared`).
    func routePass(durableOnly: Bool) async {
        if let shared { return await routeShared(shared) }
        await executor.run { self.routeLocal(durableOnly: durableOnly) }
    }

    /// Up to 1,000 waiting events, oldest first; `through` is the journal position they reach when they empty the
    /// inbox. Under the lock only what must be: `submit` (the journal's commit) waits for it.
    func takeWaiting() -> (events: [SensorEvent], through: Int?, drained: Bool) {
        inbox.withLock { inbox in
            let events = Array(inbox.events.prefix(1000))
            inbox.events.removeFirst(events.count)
            // Everything submitted up to the last position is in this batch, or was routed before it.
            guard inbox.events.isEmpty else { return (events, nil, false) }
            defer { inbox.position = nil }
            return (events, inbox.position, true)
        }
    }

    /// On the executor: routes every waiting event (rules, rate limits, the alert book, rendering), writes their
    /// notifications to the outbox in one write, then hands them to their backends' queues. `durableOnly` (hubd
    /// stopping): flushed to disk and left for the next start, not queued.
    func routeLocal(durableOnly: Bool) {
        dispatchPrecondition(condition: .onQueue(executor))
        // The alert book is asked at least once per call: its timers (a group's wait, a reminder) end without events.
        var asked = false
        while true {
            let (events, through, drained) = takeWaiting()
            guard !events.isEmpty || !asked else {
                if let through { routed(through: through) }
                if !durableOnly { dispatchHeldAlertMessages() }
                // The deliveries' done marks since the last pass, in the same thread's next write.
                outbox.writeWaitingDoneMarks()
                return
            }
            var notifications = self.notifications(for: events)
            if !asked { takeRequests() }
            asked = true
            let alerting = alertNotifications(for: events)
            notifications += alerting
            let queues = self.queues
            // An event the journal handed over again (after a crash) that is in the outbox already stays out.
            let fresh = outbox.fresh(notifications)
            do {
                try outbox.add(fresh, durable: durableOnly)
            } catch {
                inbox.withLock { $0.counters.outboxErrors += 1 }
                logger.error(
                    "cannot write the outbox; sending without it",
                    metadata: ["error": "\(error)", "count": "\(fresh.count)"])
                if !durableOnly { Self.enqueue(fresh, on: queues) }
                continue
            }
            if !durableOnly { Self.enqueue(alerting.isEmpty ? fresh : fresh.filter { $0.alert == nil }, on: queues) }
            // Alert messages go once the book holding their links is on disk (a tap must find them), saved at most
            // every `bookSaveGap` (`NotificationRouter+Saving`); the rest of the book is saved with the outbox's
            // flush (`syncRouted`), the journal keeping the events until then.
            let ready = saveBookForAlertMessages(fresh.filter { $0.alert != nil })
            if drained {
                if let through { routed(through: through) } else { outboxSyncBell.ring() }
            }
            if !ready.isEmpty && !durableOnly { Self.enqueue(ready, on: queues) }
        }
    }

    /// In a cluster: routes every waiting event into the shared outbox, each batch in one transaction.
    private func routeShared(_ shared: any SharedOutbox) async {
        while true {
            let (events, through, _) = takeWaiting()
            guard !events.isEmpty else {
                if let through { routed(through: through) }
                return
            }
            await add(notifications(for: events), to: shared, through: through)
        }
    }
}
