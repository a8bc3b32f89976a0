import HubCore

/// How the router tells the journal which events it has routed (`progress`): only once their notifications and the
/// alert book they changed are on disk. The outbox's adds are written without `fsync` (`Outbox.add(_:durable: false)`),
/// in hubd to the journal's own file right after the records they came from, so the journal's `fsync` of those
/// records covers them; `outboxSyncDelay` after the first routed batch, the outbox's `sync` makes sure of it (an
/// `fsync` only when something was written since the last), and then the position they reach is reported, every
/// `reportInterval` at most (the alert book is `fsync`ed for each report). Until then
/// the journal keeps the events, and a crash (or a power cut) replays them into the same notifications, with the
/// same ids. So a burst pays one `fsync`, the journal's (issues 38 and 54; `bench/profile.sh` counts them per
/// notification).
extension NotificationRouter {
    /// How long after routing the routed positions are looked at for a report (`reportInterval`). About the
    /// journal's own put-off `fsync` (`sensors.sync_delay`), which covers the outbox's adds.
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

    /// How often the routed position is reported, at most (or once `reportAfter` events wait): each report needs
    /// the alert book on disk, an `fsync`, and a home's book changes with every door. Between reports the book is
    /// not written (a crash makes it again from the journal's events): hubd's readers take it from memory
    /// (`LiveAlerts`), and `hubctl` asks hubd to write it first (`WriteRequest`). Reported every 5 s, a home's book
    /// took 17,856 `fsync`s a day, 90 MB; written without `fsync` every 5 s between reports, 58 MB
    /// (`bench/home.sh`). Every 5 minutes, not 30 s: on a Pi's ext4 each `fsync` of a file that grew costs the card
    /// 12–22 KiB of the filesystem's own journal besides the file's pages (`bench/fsync-cost.py`), and the journal
    /// keeps the events meanwhile, as it keeps an hour of records for the history anyway.
    static let reportInterval = Duration.seconds(300)
    /// Reported at once when this many journal records wait for it, whatever the interval: a building's 10,000
    /// messages a second would keep 3,000,000 records in the journal for 5 minutes (as
    /// `HistoryWriter.defaultMostPending`).
    static let reportAfter = 10_000

    /// Flushes the outbox, saves the alert book, then reports the position routed before the flush began. The book
    /// after the outbox: a crash between them makes the book again from the journal's events, into messages with
    /// the same keys, which the outbox has already. A flush or a save that fails reports nothing (the journal keeps
    /// the events) and is tried again `outboxSyncDelay` later.
    /// The book is saved only when its gap allows (`saveBookIfDue`), unless `force` (hubd stopping); until then the
    /// position waits, and the flush is tried again `outboxSyncDelay` later. Until a report is due
    /// (`reportInterval`), nothing is written and the position waits.
    func syncRouted(force: Bool = false, now: ContinuousClock.Instant = .now) async {
        let through = routedPosition.withLock { position in
            defer { position = nil }
            return position
        }
        guard force || isReportDue(through: through, now: now) else { return keep(through) }
        do {
            if through != nil { try await outbox.sync() }
            // Stopping: in low wear the book is written whole, where a reboot keeps it.
            guard saveBookIfDue(force: force, lasting: force) else {
                // Not due yet, or failed (logged and counted by the ledger).
                keep(through)
                return
            }
            if let through {
                lastReport.withLock { $0 = (now, through) }
                progress?(through)
            }
        } catch {
            keep(through)
            inbox.withLock { $0.counters.outboxErrors += 1 }
            logger.error(
                "cannot flush the outbox to disk; the journal keeps its events until it can",
                metadata: ["error": "\(error)", "path": "\(outbox.path)"])
        }
    }

    /// Whether the position routed through `through` is to be reported now.
    private func isReportDue(through: Int?, now: ContinuousClock.Instant) -> Bool {
        guard let through, let last = lastReport.withLock({ $0 }) else { return true }
        return now >= last.at + Self.reportInterval || through - last.position >= Self.reportAfter
    }

    /// Keeps `position` for the next pass, `outboxSyncDelay` from now.
    private func keep(_ position: Int?) {
        guard let position else { return }
        routedPosition.withLock { $0 = max($0 ?? 0, position) }
        outboxSyncBell.ring()
    }
}
