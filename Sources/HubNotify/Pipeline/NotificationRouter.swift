import Crypto
import DequeModule
import Foundation
import HubCore
import HubSupport
import Logging
import ServiceLifecycle

/// Fans events out to the backends: rules pick the backends and render the text, rate limits hold back repeats,
/// the outbox makes each notification durable before its first attempt, and every backend has its own queue.
///
/// `submit` never waits for a backend. The journal calls it on the pipeline's executor, where it routes the batch
/// before returning (`NotificationRouter+Routing.swift`).
public final class NotificationRouter: Service, Sendable {
    let outbox: Outbox
    /// In a cluster: where notifications are kept instead of `outbox` (`NotificationRouter+Shared.swift`).
    let shared: (any SharedOutbox)?
    /// Rung when the shared outbox may have new rows (this agent committed events).
    let sharedDoorbell = Doorbell()
    let logger: Logger
    let stateDirectory: String
    let actionKeyCache = Locked<SymmetricKey?>(nil)
    let publish: MQTTPublish?
    let setup: Locked<Setup>
    /// Rung for the routing loop: a pass is wanted (`passWanted`), or the alert book's next deadline may have moved.
    let doorbell = Doorbell()
    /// The deadline the routing loop waits for, once it has settled on it (`routeUntilCancelled`): a batch routed on
    /// the executor wakes the loop only when it moved the alert book's next deadline sooner.
    let loopWait = Locked(LoopWait())
    /// How many times the routing loop woke (tests count them).
    let loopWakes = Locked(0)

    struct LoopWait {
        var deadline: ContinuousClock.Instant?
        /// False while the loop works out its next deadline: a batch routed meanwhile wakes it.
        var settled = false
    }
    let passWanted = Locked(false)
    let inbox = Locked(Inbox())
    /// The pipeline's executor: every routing pass runs on it, one at a time. In a hub on its own the journal commits
    /// on it too, and a batch it hands over is routed right there, on the thread that wrote it (`submit`).
    let executor: DispatchQueue
    /// Names `executor`, so that `submit` knows when it runs there.
    private let executorTag = UInt64.random(in: 1...UInt64.max)
    private static let executorKey = DispatchSpecificKey<UInt64>()
    /// Set while the routing loop runs without a cluster: batches submitted on the executor are routed at once.
    let routesInline = Locked(false)
    /// Told the journal position up to which every submitted event is in the outbox (or needed none).
    let progress: (@Sendable (Int) -> Void)?
    /// Routed up to here, written to the outbox but not yet flushed (`NotificationRouter+Progress.swift`).
    let routedPosition = Locked<Int?>(nil)
    /// The last progress report: when, and the position it reached (`NotificationRouter+Progress.swift`).
    let lastReport = Locked<(at: ContinuousClock.Instant, position: Int)?>(nil)
    let outboxSyncBell = Doorbell()
    /// The alerts, their groups and silences (`AlertBook`), kept in `alerts.json`.
    let alerts: AlertLedger
    /// Alert messages in the outbox that wait for the book's next save before they go (`NotificationRouter+Saving`).
    let bookSaving = Locked(BookSaving())
    /// What people ask of the alerts (`hubctl alerts ack`, `hubctl silences add`), on its way to the book.
    let requests: AlertRequests
    /// Set when the requests file changed (and at start): the next routing takes them.
    let requestsWaiting = Locked(true)
    /// In a cluster: where the alert book is kept (`NotificationRouter+SharedAlerts.swift`), and what its keeper
    /// waits on.
    let sharedAlerts: (any SharedAlertBook)?
    let sharedAlertsDoorbell = Doorbell()
    /// Rung by a reload: the keeper of a cluster's book starts its listeners for buttons again.
    let listenersReload = Doorbell()

    /// The rules and the backends' queues: replaced as a whole by a reload.
    struct Setup {
        var configuration: NotifierConfiguration
        var queues: [String: BackendQueue]
        /// What the alert stage needs of `configuration`.
        var alerts: AlertBook.Setup
        /// Queues a reload made that `run` has not started yet, each with the queue it replaces.
        var unstarted: [(queue: BackendQueue, replacing: BackendQueue?)] = []
        /// Queues of backends a reload removed, stopping.
        var retired: [BackendQueue] = []
    }

    /// What a reload did to the backends, by name.
    public struct Reconfiguration: Sendable, Hashable {
        public var added: [String] = []
        /// Whose settings changed (every backend is made anew, with the old one's queue and statistics).
        public var changed: [String] = []
        /// Gone: their notifications stay in the outbox (counted as orphaned) and are not sent.
        public var removed: [String] = []
    }

    /// How many events may wait for the router; more are dropped, logged and counted.
    static let inboxCapacity = 100_000

    struct Inbox {
        var events = Deque<SensorEvent>()
        /// The journal position of the last events submitted, until reported.
        var position: Int?
        var limiter = RateLimiter()
        var counters = RouterCounters()
    }

    /// What the router itself did (the backends count their own).
    public struct RouterCounters: Sendable, Hashable, Codable {
        public var events = 0
        /// Notifications held back by a rule's rate limit.
        public var suppressed = 0
        /// Notifications of rules without alerting held back by a silence.
        public var silenced = 0
        /// Events dropped because the router fell 100,000 behind.
        public var overflowed = 0
        /// Failures to write the outbox (the notification was still sent, but not durably).
        public var outboxErrors = 0
        /// Unreadable outbox lines skipped at start (a torn last line after a crash).
        public var outboxUnreadable = 0
        /// Notifications left in the outbox for backends a reload removed: not sent.
        public var orphaned = 0
        public init() {}
    }

    /// Everything `hubctl status` shows about notifications.
    public struct Statistics: Sendable, Hashable, Codable {
        public var router = RouterCounters()
        public var backends: [String: BackendStatistics] = [:]
        public var outboxPending = 0
        public var alerts = AgentStatus.Alerts()
        public init() {}
    }

    /// - Parameters:
    ///   - publish: how the `mqtt` backend publishes (the agent's own connection); `nil` refuses an mqtt backend.
    ///   - progress: told the journal position up to which events are routed, once the outbox holds them on disk.
    ///   - log: where the outbox's lines go: the journal's file in hubd (`outbox.jsonl` of its own when nil).
    ///   - shared: a cluster's outbox, which then keeps every notification (the file outbox none).
    ///   - sharedAlerts: a cluster's alert book, which then keeps the alerts (`alerts.json` nothing).
    ///   - executor: the pipeline's executor, shared with the journal (`Journal(executor:)`); one of its own when nil.
    ///   - lowWear: the alert book's log is in memory (`state.low_wear`, `AlertLedger.logInMemory`).
    public init(
        configuration: NotifierConfiguration, stateDirectory: String, logger: Logger,
        publish: MQTTPublish? = nil, progress: (@Sendable (Int) -> Void)? = nil, log: (any NotificationLog)? = nil,
        shared: (any SharedOutbox)? = nil,
        sharedAlerts: (any SharedAlertBook)? = nil, executor: DispatchQueue? = nil,
        lowWear: Bool = false
    ) throws(ConfigurationError) {
        self.executor = executor ?? DispatchQueue(label: "sensorhub.pipeline")
        self.executor.setSpecific(key: Self.executorKey, value: executorTag)
        self.progress = progress
        self.sharedAlerts = sharedAlerts
        self.outbox = Outbox(directory: stateDirectory, log: log, logger: logger)
        self.shared = shared
        self.logger = logger
        self.stateDirectory = stateDirectory
        self.publish = publish
        let outbox: any NotificationLedger = shared ?? self.outbox
        let queues = try Self.makeQueues(configuration.backends, stateDirectory, logger, publish) { spec, notifier in
            BackendQueue(
                name: spec.name, notifier: notifier, policy: spec.policy, outbox: outbox, logger: logger)
        }
        self.setup = Locked(Setup(configuration: configuration, queues: queues, alerts: configuration.alertSetup))
        self.alerts = AlertLedger(directory: stateDirectory, logger: logger, logInMemory: lowWear)
        self.requests = AlertRequests(directory: stateDirectory)
    }

    /// A queue for each of `specs`; none when one of them can't be made.
    private static func makeQueues(
        _ specs: [BackendSpec], _ stateDirectory: String, _ logger: Logger, _ publish: MQTTPublish?,
        _ queue: (BackendSpec, any Notifier) -> BackendQueue
    ) throws(ConfigurationError) -> [String: BackendQueue] {
        var queues: [String: BackendQueue] = [:]
        for spec in specs {
            do {
                let notifier = try spec.makeNotifier(stateDirectory: stateDirectory, logger: logger, publish: publish)
                queues[spec.name] = queue(spec, notifier)
            } catch {
                // The HTTP clients made so far must be closed before they are dropped.
                for queue in queues.values { (queue.notifier as? any HTTPBacked)?.http.shutdownNow() }
                throw error
            }
        }
        return queues
    }

    /// The rules and backends in use.
    public var configuration: NotifierConfiguration { setup.withLock { $0.configuration } }

    var queues: [String: BackendQueue] { setup.withLock { $0.queues } }

    public var statistics: Statistics {
        var statistics = Statistics()
        statistics.router = inbox.withLock {
            var counters = $0.counters
            counters.outboxErrors += outbox.errors
            return counters
        }
        statistics.backends = queues.mapValues(\.statistics)
        statistics.outboxPending = outbox.pendingCount
        statistics.alerts = alerts.update { $0.statistics(now: .now) }
        statistics.alerts.silenced += statistics.router.silenced
        return statistics
    }

    /// Takes new rules and backends (SIGHUP) without losing a notification. Every backend is made anew (a secret
    /// or key file it reads may have changed) and takes over its predecessor's queue, with its statistics, once the
    /// attempts in flight are done; one that is gone stops, and what it still had stays in the outbox, counted as
    /// orphaned. Throws, and changes nothing, when a backend can't be made.
    @discardableResult
    public func reconfigure(_ configuration: NotifierConfiguration) throws(ConfigurationError) -> Reconfiguration {
        let current = self.configuration
        let old = Dictionary(uniqueKeysWithValues: current.backends.map { ($0.name, $0) })
        let outbox: any NotificationLedger = shared ?? self.outbox
        let logger = self.logger
        let made = try Self.makeQueues(configuration.backends, stateDirectory, logger, publish) { spec, notifier in
            BackendQueue(
                name: spec.name, notifier: notifier, policy: spec.policy, outbox: outbox, logger: logger)
        }
        var result = Reconfiguration()
        let wanted = Set(configuration.backends.map(\.name))
        let stopped = setup.withLock { setup -> [BackendQueue] in
            var stopped: [BackendQueue] = []
            for (name, queue) in made {
                let replaced = setup.queues[name]
                if let replaced { stopped.append(replaced) }
                setup.queues[name] = queue
                setup.unstarted.append((queue, replaced))
                if replaced == nil {
                    result.added.append(name)
                } else if old[name]?.fingerprint
                    != configuration.backends.first(where: { $0.name == name })?.fingerprint
                {
                    result.changed.append(name)
                }
            }
            for (name, queue) in setup.queues where !wanted.contains(name) {
                setup.queues[name] = nil
                setup.retired.append(queue)
                stopped.append(queue)
                result.removed.append(name)
            }
            setup.configuration = configuration
            setup.alerts = configuration.alertSetup
            return stopped
        }
        for queue in stopped { queue.stop() }
        listenersReload.ring()
        result.added.sort()
        result.changed.sort()
        result.removed.sort()
        wantPass()
        return result
    }

    /// Hands an event to the router; returns at once.
    public func submit(_ event: SensorEvent) {
        submit([event], through: nil)
    }

    /// Hands events to the router; `position` is the journal position they come from, reported to `progress` once
    /// they are in the outbox. On the pipeline's executor (the journal's commit) they are routed before it returns;
    /// elsewhere it returns at once and the routing loop takes them.
    public func submit(_ events: [SensorEvent], through position: Int?) {
        let dropped = inbox.withLock { inbox -> [SensorEvent] in
            inbox.counters.events += events.count
            if let position { inbox.position = position }
            let room = max(0, Self.inboxCapacity - inbox.events.count)
            inbox.events.append(contentsOf: events.prefix(room))
            inbox.counters.overflowed += max(0, events.count - room)
            return Array(events.dropFirst(room))
        }
        for event in dropped {
            logger.error(
                "notification router overloaded: event dropped",
                metadata: ["event": "\(event.sensor): \(event.newStatus)", "id": "\(event.id)"])
        }
        guard DispatchQueue.getSpecific(key: Self.executorKey) == executorTag, routesInline.withLock({ $0 }) else {
            return wantPass()
        }
        routeLocal(durableOnly: false)
        // The loop waits for the alert book's next deadline, which this pass may have moved: woken only when it is
        // sooner now (by more than the book's milliseconds turned into the clock's instants differ by from one call
        // to the next). Woken for every batch, the loop made a task group, a timer and three or four context switches
        // a message at a home's rate (`bench/home.sh`).
        guard !setup.withLock({ $0.alerts.isEmpty }) else { return }
        let waiting = loopWait.withLock { $0 }
        // The loop is working its deadline out (it may have read the book before this pass): woken to do it again.
        guard waiting.settled else { return doorbell.ring() }
        if let next = alertDeadline(), waiting.deadline.map({ next + .milliseconds(10) < $0 }) ?? true {
            doorbell.ring()
        }
    }

    /// Asks the routing loop for a pass.
    func wantPass() {
        passWanted.withLock { $0 = true }
        doorbell.ring()
    }

    /// Delivers until graceful shutdown or cancellation: first what the outbox still holds from before, then new
    /// events. Then events not yet routed are written to the outbox for the next start.
    public func run() async {
        await cancelWhenGracefulShutdown { await self.deliver() }
    }

    private func deliver() async {
        if let shared { return await deliverShared(shared) }
        alerts.open()
        await resendFromBefore()
        await withTaskGroup(of: Void.self) { group in
            for queue in queues.values {
                group.addTask { await queue.run() }
                group.addTask { await self.listenForAnswers(on: queue) }
            }
            await routeUntilCancelled()
            group.cancelAll()
        }
        // Whatever arrived but was not routed yet waits in the outbox for the next start.
        await routePass(durableOnly: true)
        await syncRouted(force: true)
        await outbox.close()
    }

    /// Routes what is submitted, and starts the queues a reload makes, until cancelled.
    func routeUntilCancelled() async {
        // The first pass runs at once, event or not (a request written while hubd was down, a silence that ended
        // meanwhile). From then on a batch the journal hands over on the executor is routed there.
        wantPass()
        if shared == nil { routesInline.withLock { $0 = true } }
        defer { routesInline.withLock { $0 = false } }
        await withTaskGroup(of: Void.self) { group in
            // Without a cluster: the outbox flushed and the routed position reported, and people's requests taken.
            // Their file is watched from here, before the first pass takes what it holds (a request written in
            // between would otherwise wait for the file's next change).
            if shared == nil {
                let requestChanges = RegistryWatcher.changes(of: requests.path, logger: logger)
                group.addTask { await self.syncRoutedUntilCancelled() }
                group.addTask {
                    for await _ in requestChanges {
                        self.requestsWaiting.withLock { $0 = true }
                        self.wantPass()
                    }
                }
            }
            while !Task.isCancelled {
                let deadline = shared == nil ? alertDeadline() : nil
                loopWait.withLock { $0 = LoopWait(deadline: deadline, settled: true) }
                await doorbell.wait(until: deadline)
                loopWait.withLock { $0.settled = false }
                loopWakes.withLock { $0 += 1 }
                // Not for a ring that only says the deadline may have moved: the wait starts again with the new one.
                let wanted = passWanted.withLock { wanted in
                    defer { wanted = false }
                    return wanted || deadline.map { $0 <= .now } ?? false
                }
                let (unstarted, retired) = setup.withLock { setup in
                    defer { (setup.unstarted, setup.retired) = ([], []) }
                    return (setup.unstarted, setup.retired)
                }
                for (queue, replaced) in unstarted {
                    group.addTask { await self.start(queue, replacing: replaced) }
                }
                for queue in retired {
                    group.addTask { await self.retire(queue) }
                }
                if wanted { await routePass(durableOnly: false) }
            }
            group.cancelAll()
        }
    }

    /// Runs a queue a reload made; one that replaces another first takes over what the old one still had.
    private func start(_ queue: BackendQueue, replacing old: BackendQueue?) async {
        if let old {
            await old.finished()
            queue.adopt(old.takeItems())
        }
        await withTaskGroup(of: Void.self) { group in
            // In a cluster only the book's keeper listens (from when it takes the book).
            if shared == nil { group.addTask { await self.listenForAnswers(on: queue) } }
            await queue.run()
            group.cancelAll()
        }
    }

    /// Once a removed backend's attempts in flight are done: what it still had stays in the outbox, reported.
    private func retire(_ queue: BackendQueue) async {
        await queue.finished()
        let left = queue.takeItems().items.count
        guard left > 0 else { return }
        inbox.withLock { $0.counters.orphaned += left }
        logger.warning(
            "a reload removed a backend that still had notifications; they stay in the outbox, unsent",
            metadata: ["backend": "\(queue.name)", "count": "\(left)", "outbox": "\(outbox.path)"])
    }
}
