import DequeModule
import Foundation
import HubCore
import HubSupport
import Logging

/// How a backend's queue behaves: its size, what happens when it is full, how many attempts run at once, how long
/// one may take, and how failed ones are retried.
public struct DeliveryPolicy: Sendable, Hashable {
    /// What to do with a new notification when the queue is full.
    public enum Overflow: String, Sendable, Hashable, CaseIterable {
        /// Drop the oldest waiting notification to make room (the newest news matters most).
        case dropOldest = "drop_oldest"
        /// Drop the new one.
        case dropNewest = "drop_newest"
    }

    /// Notifications held in memory (waiting or retrying); the outbox on disk holds them too.
    public var capacity = 1000
    public var overflow = Overflow.dropOldest
    /// Attempts in flight at once.
    public var concurrency = 1
    /// How long one attempt may take before it counts as failed (and is retried).
    public var timeout: Duration = .seconds(10)
    /// The first retry's delay; each retry doubles it, up to `maximumDelay`, each with random jitter (50–100 %).
    public var initialDelay: Duration = .seconds(2)
    public var maximumDelay: Duration = .seconds(300)
    /// A notification older than this is given up on (logged and counted as expired).
    public var maximumAge: Duration = .seconds(86_400)

    public init() {}

    /// The delay before retry number `attempt` (1 for the first retry): exponential, capped, jittered; a
    /// receiver's `Retry-After` is honoured when it asks for longer.
    func delay(attempt: Int, requested: Duration?) -> Duration {
        let exponent = Double(min(attempt - 1, 30))
        let base = min(initialDelay.seconds * pow(2, exponent), maximumDelay.seconds)
        let jittered = base * Double.random(in: 0.5...1.0)
        return .seconds(max(jittered, min(requested?.seconds ?? 0, maximumAge.seconds)))
    }
}

/// One backend's queue and workers: bounded, with its own concurrency, so that a slow or broken backend holds up
/// nothing but itself.
final class BackendQueue: Sendable {
    let name: String
    let notifier: any Notifier
    let policy: DeliveryPolicy
    /// Where notifications are marked done: the outbox file, or a cluster's outbox.
    let outbox: any NotificationLedger
    let logger: Logger
    private let doorbell = Doorbell()
    private let state = Locked(State())
    /// Resumed once `run` has returned.
    private let done = ResumeOnce()
    /// The notifier, when it starts attempts without a task; how many of those may be unanswered at once.
    private let starter: (any StartingNotifier)?
    private let startedLimit: Int

    struct Item: Sendable {
        var notification: Notification
        var attempts = 0
        var notBefore: ContinuousClock.Instant?
    }

    struct State: Sendable {
        /// Waiting for a first attempt or a retry, oldest first.
        var items = Deque<Item>()
        var statistics = BackendStatistics()
        var dropLog = LogThrottle()
        /// A reload replaced or removed the backend: the workers finish their attempts in flight and stop.
        var stopped = false
        /// Attempts started as they were queued (`StartingNotifier`) and not answered yet; a worker's attempts.
        var started = 0
        var attempting = 0
    }

    init(
        name: String, notifier: any Notifier, policy: DeliveryPolicy, outbox: any NotificationLedger,
        logger: Logger
    ) {
        self.name = name
        self.notifier = notifier
        self.starter = notifier as? any StartingNotifier
        self.startedLimit = max(policy.concurrency, 1) * notifier.batchSize
        self.policy = policy
        self.outbox = outbox
        var logger = logger
        logger[metadataKey: "backend"] = "\(name)"
        self.logger = logger
    }

    var statistics: BackendStatistics {
        state.withLock {
            var statistics = $0.statistics
            statistics.queued = $0.items.count
            return statistics
        }
    }

    /// Queues `notifications` (already in the outbox); a full queue applies the overflow policy. Returns at once (the
    /// router calls it on the pipeline's executor). A backend that starts its attempts without a task has them
    /// started here, while nothing waits before them and fewer than a worker's batch are unanswered.
    func enqueue(_ notifications: [Notification]) {
        var dropped: [Notification] = []
        var starting: [Notification] = []
        let now = ContinuousClock.now
        let (logDrops, queued) = state.withLock { state -> (Int?, Bool) in
            for notification in notifications {
                if starter != nil && !state.stopped && state.items.isEmpty && state.attempting == 0
                    && state.started < startedLimit
                {
                    state.started += 1
                    starting.append(notification)
                } else if state.items.count >= policy.capacity {
                    switch policy.overflow {
                    case .dropOldest:
                        dropped.append(state.items.removeFirst().notification)
                        state.items.append(Item(notification: notification))
                    case .dropNewest:
                        dropped.append(notification)
                    }
                } else {
                    state.items.append(Item(notification: notification))
                }
            }
            let queued = starting.count < notifications.count
            guard !dropped.isEmpty else { return (nil, queued) }
            state.statistics.dropped += dropped.count
            return (state.dropLog.note(dropped.count, now: now), queued)
        }
        if let starter {
            for notification in starting {
                starter.start(notification) { self.answered(Item(notification: notification), $0) }
            }
        }
        if let count = logDrops {
            logger.warning(
                "queue full: dropped notifications",
                metadata: [
                    "dropped": "\(count)", "capacity": "\(policy.capacity)", "policy": "\(policy.overflow.rawValue)",
                    "total_dropped": "\(statistics.dropped)",
                    "example": "\(dropped.last.map { "\($0.event.sensor): \($0.title)" } ?? "")",
                ])
        }
        for notification in dropped { outbox.markDoneLater(notification.key) }
        if queued { doorbell.ring() }
    }

    /// An attempt started by `enqueue` has its answer (on the thread its I/O ended on): delivered is settled there,
    /// the rest (giving up, a retry) by a task.
    private func answered(_ item: Item, _ result: DeliveryResult) {
        state.withLock { $0.started -= 1 }
        guard case .delivered = result else {
            Task { await settle(item, result) }
            return
        }
        var item = item
        item.attempts += 1
        delivered(item)
    }

    /// A notification that had nobody to go to (no registered devices) or whose recipients can't be read: not sent,
    /// logged and counted as failed.
    func noRecipients(_ notification: Notification, reason: String) {
        state.withLock {
            $0.statistics.failed += 1
            $0.statistics.lastError = reason
            $0.statistics.lastErrorAt = .now
        }
        logger.error(
            "notification not sent: no recipients",
            metadata: ["id": "\(notification.id)", "sensor": "\(notification.event.sensor)", "reason": "\(reason)"])
    }

    /// Runs the workers until cancelled or stopped.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(policy.concurrency, 1) {
                group.addTask { await self.work() }
            }
        }
        await notifier.shutdown()
        done.resume()
    }

    /// Asks the workers to stop after their attempts in flight (a reload replaced or removed the backend).
    func stop() {
        state.withLock { $0.stopped = true }
        doorbell.ring()
    }

    /// Returns once `run` has.
    func finished() async {
        await withCheckedContinuation { done.set($0) }
    }

    /// What a stopped queue still holds, for the backend that replaces it.
    func takeItems() -> (items: [Item], statistics: BackendStatistics) {
        state.withLock { state in
            defer { state.items.removeAll() }
            return (Array(state.items), state.statistics)
        }
    }

    /// Drops every notification waiting for a first attempt or a retry (attempts in flight finish); returns how many.
    /// A cluster's agent whose claims on them may have run out: another agent may be sending them now.
    func dropWaiting() -> Int {
        state.withLock { state in
            defer { state.items.removeAll() }
            return state.items.count
        }
    }

    /// Takes over a replaced queue's notifications (with their attempts and retry times) and statistics.
    func adopt(_ taken: (items: [Item], statistics: BackendStatistics)) {
        state.withLock {
            $0.items.append(contentsOf: taken.items)
            $0.statistics = taken.statistics
        }
        doorbell.ring()
    }

    private func work() async {
        while !Task.isCancelled && !state.withLock({ $0.stopped }) {
            let now = ContinuousClock.now
            let limit = notifier.batchSize
            let next = state.withLock { state -> ([Item], ContinuousClock.Instant?) in
                // The first items that are due; retries wait their turn without holding up newer notifications.
                var taken: [Item] = []
                while taken.count < limit,
                    let index = state.items.firstIndex(where: { ($0.notBefore ?? now) <= now })
                {
                    taken.append(state.items.remove(at: index))
                }
                if !taken.isEmpty { state.attempting += 1 }
                return (taken, taken.isEmpty ? state.items.compactMap(\.notBefore).min() : nil)
            }
            guard !next.0.isEmpty else {
                await doorbell.wait(until: next.1)
                continue
            }
            await attempt(next.0)
            state.withLock { $0.attempting -= 1 }
        }
    }

    /// One attempt for `items`: one call (a batch, for backends that take them), one timeout.
    private func attempt(_ items: [Item]) async {
        let notifications = items.map(\.notification)
        let results =
            notifier.enforcesTimeout
            ? await notifier.send(batch: notifications)
            : await withTimeout(policy.timeout) { await self.notifier.send(batch: notifications) }
        // Stopping: the attempt was cut short, not failed. The outbox still has it for the next start.
        if Task.isCancelled { return }
        for (index, item) in items.enumerated() {
            let result =
                results.map { $0[index] }
                ?? .retry(reason: "timed out: no answer within \(DurationText.format(policy.timeout))")
            await settle(item, result)
        }
    }

    /// Counts `item` delivered, at its `attempts`th attempt, and marks it done.
    private func delivered(_ item: Item) {
        state.withLock {
            $0.statistics.delivered += 1
            $0.statistics.lastDelivered = .now
        }
        logger.debug("delivered", metadata: ["id": "\(item.notification.id)", "attempts": "\(item.attempts)"])
        outbox.markDoneLater(item.notification.key)
    }

    private func settle(_ item: Item, _ result: DeliveryResult) async {
        var item = item
        item.attempts += 1
        let notification = item.notification
        switch result {
        case .delivered:
            delivered(item)
        case .failed(let reason):
            giveUp(item, reason: reason)
            await outbox.markDone([notification.key])
        case .retired(let reason):
            giveUp(item, reason: reason, level: .notice)
            await outbox.markDone([notification.key])
        case .retry(let reason, let after):
            let age = Duration.milliseconds(
                Timestamp.now.millisecondsSince1970 - notification.created.millisecondsSince1970)
            let delay = policy.delay(attempt: item.attempts, requested: after)
            if age + delay > policy.maximumAge {
                giveUp(item, reason: "\(reason); still failing after \(DurationText.format(age)), giving up")
                await outbox.markDone([notification.key])
                return
            }
            logger.notice(
                "delivery failed, will retry",
                metadata: [
                    "id": "\(notification.id)", "sensor": "\(notification.event.sensor)", "error": "\(reason)",
                    "attempt": "\(item.attempts)", "retry_in": "\(DurationText.format(delay))",
                ])
            item.notBefore = .now + delay
            state.withLock {
                $0.statistics.retried += 1
                $0.statistics.lastError = reason
                $0.statistics.lastErrorAt = .now
                $0.items.append(item)
            }
            doorbell.ring()
        }
    }

    /// Counts `item` as failed and logs it: an error, unless the failure is routine (`level`).
    private func giveUp(_ item: Item, reason: String, level: Logger.Level = .error) {
        state.withLock {
            $0.statistics.failed += 1
            $0.statistics.lastError = reason
            $0.statistics.lastErrorAt = .now
        }
        logger.log(
            level: level, "notification failed",
            metadata: [
                "id": "\(item.notification.id)", "sensor": "\(item.notification.event.sensor)",
                "title": "\(item.notification.title)", "error": "\(reason)", "attempts": "\(item.attempts)",
            ])
    }
}
