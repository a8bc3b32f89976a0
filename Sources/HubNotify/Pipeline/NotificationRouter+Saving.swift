import HubCore

/// When the alert book is saved (whole, `alerts.json`, atomically and `fsync`ed). Before alert messages go, since a
/// tap on one must find its link on disk after a restart; and with the outbox's flush (`syncRouted`), before the
/// journal is told the events are routed (it keeps them until then). Never more often than `bookSaveGap` allows:
/// the messages made meanwhile wait in the outbox, the journal keeps the events.
///
/// Measured (`ONLY=storm bench/alerts.sh`, release build, 10,000 groups, a power cut's wills arriving one by one
/// over 10 s): saved per drained burst and before each tick's messages, the whole book was written 10,000 times,
/// 74 % of the router's CPU (13.4 s of CPU with the storm guard, 13.0 s without); a save of that book takes about
/// 150 ms.
extension NotificationRouter {
    /// The shortest time between two saves: what a small book waits (the first alert message after a quiet spell
    /// goes at once).
    static let bookSaveGap = Duration.milliseconds(250)
    /// Saves are spaced by this many times the last one's length: a book whose save takes 150 ms is saved at most
    /// every 1.5 s for the flush and every 1.5 s for messages, a fifth of a core at most.
    static let bookSaveShare = 10

    struct BookSaving {
        /// The last save, and the last that let alert messages go: the two are spaced apart on their own, so that
        /// the flush's save never makes a message wait (a power cut's first message went 1.3 s → 3.6 s after the
        /// wills when they shared one gap).
        var lastSave: ContinuousClock.Instant?
        var lastForMessages: ContinuousClock.Instant?
        /// In the outbox, waiting for the next save.
        var held: [Notification] = []

        func forMessages(_ messages: Bool) -> ContinuousClock.Instant? { messages ? lastForMessages : lastSave }
    }

    /// The time between two saves when the last took `write`.
    static func saveGap(afterWrite write: Duration) -> Duration { max(bookSaveGap, write * bookSaveShare) }

    /// When the book may be saved next: for the outbox's flush, or to let alert messages go.
    func nextBookSave(forMessages: Bool = false) -> ContinuousClock.Instant? {
        let gap = Self.saveGap(afterWrite: alerts.lastWrite)
        return bookSaving.withLock { ($0.forMessages(forMessages)).map { $0 + gap } }
    }

    /// Saves the book now if the gap since the last save allows it (or `force`); whether it is on disk.
    func saveBookIfDue(
        force: Bool = false, forMessages: Bool = false, lasting: Bool = false, now: ContinuousClock.Instant = .now
    ) -> Bool {
        if !force, let next = nextBookSave(forMessages: forMessages), next > now { return false }
        // A save that fails is logged and counted by the ledger.
        let saved = alerts.save(lasting: lasting)
        bookSaving.withLock { saving in
            saving.lastSave = now
            if forMessages { saving.lastForMessages = now }
        }
        return saved
    }

    /// Of `messages` (alert messages written to the outbox), those that may go now, with any held before: all of
    /// them once the book is saved, else none (held for the next save). A save that fails lets them go all the same:
    /// a notification late is better than none.
    func saveBookForAlertMessages(_ messages: [Notification], now: ContinuousClock.Instant = .now) -> [Notification] {
        let waiting = bookSaving.withLock { saving -> Bool in
            saving.held += messages
            return !saving.held.isEmpty
        }
        guard waiting else { return [] }
        // Held: the router's next wait ends when the save is due (`alertDeadline`).
        if let next = nextBookSave(forMessages: true), next > now { return [] }
        _ = saveBookIfDue(force: true, forMessages: true, now: now)
        return bookSaving.withLock { saving in
            defer { saving.held = [] }
            return saving.held
        }
    }

    /// Writes the book's files for a reader outside hubd (`hubctl`, through `WriteRequest`), without `fsync`: in
    /// between, the files follow the book only when it must be durable. On one hub only (a cluster's book is the
    /// database's).
    public func writeBookForReaders() {
        guard sharedAlerts == nil, alerts.openBook != nil else { return }
        alerts.save(durable: false)
    }

    /// Sends what waited for the book's save, once it is due.
    func dispatchHeldAlertMessages() {
        let ready = saveBookForAlertMessages([])
        guard !ready.isEmpty else { return }
        Self.enqueue(ready, on: queues)
    }

    /// Each notification to its backend's queue, a batch a backend.
    static func enqueue(_ notifications: [Notification], on queues: [String: BackendQueue]) {
        var byBackend: [String: [Notification]] = [:]
        for notification in notifications { byBackend[notification.backend, default: []].append(notification) }
        for (backend, notifications) in byBackend { queues[backend]?.enqueue(notifications) }
    }

    /// When held alert messages may go; nil when none wait.
    func heldAlertMessagesDeadline() -> ContinuousClock.Instant? {
        guard bookSaving.withLock({ !$0.held.isEmpty }) else { return nil }
        return nextBookSave(forMessages: true) ?? .now
    }
}
