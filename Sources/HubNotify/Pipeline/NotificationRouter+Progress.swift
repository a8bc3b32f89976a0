import HubCore

/// How the router tells the journal which events it has routed (`progress`): only once their notifications and the
/// alert book they changed are on disk. The outbox's adds are written without `fsync` (`Outbox.add(_:durable: false)`),
/// in hubd to the journal's own file right after the records they came from, so the journal's `fsync` of those
/// records covers them; `outboxSyncDelay` after the first routed batch, the outbox's `sync` makes sure of it (an
/// `fsync` only when something was written since the last), and then the position they reach is reported. Until then
/// the journal keeps the events, and a crash (or a power cut) replays them into the same notifications, with the
/// same ids. So a burst pays one `fsync`, the journal's (issues 38 and 54; `bench/profile.sh` counts them per
/// notification).
extension NotificationRouter {
    /// How long routed positions wait for the outbox's `fsync`: the journal holds those events that long more. As
    /// long as the journal's own put-off `fsync` (`sensors.sync_delay`, 5 s by default), which covers the outbox's
    /// adds: reported sooner, the position needs the alert book saved sooner too, and a home's book, saved every
    /// second or so with it, took 33 `fsync`s a minute (`bench/home.sh`).
    static let outboxSyncDelay = Duration.seconds(5)

    /// Everything submitted up to `position` is written to the outbox (or needed nothing there): reported once the
    /// outbox is flushed. In a cluster, where the shared outbox commits each batch, at once.
    func routed(through position: Int) {
        if shared != nil {
            progress?(position)
            return
        }
        routedPosition.withLock { $0 = max($0 ?? 0, position) }
        outboxSyncBell.ring()
    }

    /// Until cancelled: `outboxSyncDelay` after something is routed, flushes the outbox and reports where routing
    /// reached.
    func syncRoutedUntilCancelled() async {
        while !Task.isCancelled {
            await outboxSyncBell.wait(until: nil)
            guard (try? await Task.sleep(for: Self.outboxSyncDelay)) != nil else { return }
            await syncRouted()
        }
    }

    /// Flushes the outbox, saves the alert book, then reports the position routed before the flush began. The book
    /// after the outbox: a crash between them makes the book again from the journal's events, into messages with
    /// the same keys, which the outbox has already. A flush or a save that fails reports nothing (the journal keeps
    /// the events) and is tried again `outboxSyncDelay` later.
    /// The book is saved only when its gap allows (`saveBookIfDue`), unless `force` (hubd stopping); until then the
    /// position waits, and the flush is tried again `outboxSyncDelay` later.
    func syncRouted(force: Bool = false) async {
        let through = routedPosition.withLock { position in
            defer { position = nil }
            return position
        }
        do {
            if through != nil { try await outbox.sync() }
            guard saveBookIfDue(force: force) else {
                // Not due yet, or failed (logged and counted by the ledger).
                if let through { routedPosition.withLock { $0 = max($0 ?? 0, through) } }
                outboxSyncBell.ring()
                return
            }
            if let through { progress?(through) }
        } catch {
            if let through { routedPosition.withLock { $0 = max($0 ?? 0, through) } }
            outboxSyncBell.ring()
            inbox.withLock { $0.counters.outboxErrors += 1 }
            logger.error(
                "cannot flush the outbox to disk; the journal keeps its events until it can",
                metadata: ["error": "\(error)", "path": "\(outbox.path)"])
        }
    }
}
