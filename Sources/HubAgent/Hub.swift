import Foundation
import HubCore
import HubHistory
import HubNotify
import HubRemote
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// hubd's services, made and wired in one place, in the order they start; a graceful shutdown stops them in
/// reverse, each once the one after it has stopped:
///
/// sources (the SDS011, the UV index) → the broker connection (`offline` published, the client closed) →
/// subscriptions → ingest (every message that arrived until then) → notifications (what is not routed yet goes to
/// the outbox) → the history → the store (the last statuses written) → the journal (emptied when everything in it
/// is elsewhere). With `remote:`, the remote writer sits beside the history: a reading sink and a journal
/// consumer whose durable queue feeds a PostgreSQL database.
///
/// ```
/// broker ─▶ BrokerConnection ─clients─▶ Ingest ─records─▶ Journal (fsync) ─▶ StoreWriter, NotificationRouter,
///               ▲        Subscriptions ◀─ registry file (hubctl)                          HistoryWriter
/// SDS011Source ─┤ (each publishes its own topic)         (each acknowledges what it has made durable)
/// UVSource ─────┘
/// ```
public struct Hub: Sendable {
    /// In start order.
    public let services: [any Service]
    /// What the HTTP API, `/metrics` and the status file read.
    public let snapshot: HubSnapshot.Source
    public let router: NotificationRouter
    public let store: any RegistryStore
    public let stateDirectory: String
    /// What the history is read through: `history.sqlite`, or the store's database.
    public let history: HistorySource
    /// Starts or stops a mobile sensor's recording session (the API's `POST /api/v1/sensors/{name}/session`).
    public let session: @Sendable (SessionAction, _ sensor: String) async throws -> SensorTracker.Outcome
    /// Listens for devices on the broker for a while, on a connection of its own, as `hubctl discover` does (the
    /// dashboard's discovery).
    public let discover: @Sendable (Duration) async throws -> DeviceDiscovery

    /// Reads the registry (a damaged one stops hubd: it is the user's to fix, not ours to guess around), opens the
    /// history, and makes the services.
    public static func make(
        configuration: HubConfiguration, configurationOption: String?, file: ConfigNode? = nil,
        notifiers: NotifierConfiguration,
        state: StateDirectory, store: any RegistryStore, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()
    ) async throws -> Hub {
        var document: DefaultsDocument
        /// The registry read: the subscriptions service need not read it again when the broker connects.
        let followed: Locked<RegistryVersion?>
        let runtime = runtimeDirectory()
        let journalDirectory = try placeLogs(
            lowWear: configuration.lowWear, state: state.path, runtime: runtime, logger: logger)
        do {
            let (version, read) = try await store.read(ifChangedFrom: nil)
            document = read ?? DefaultsDocument()
            followed = Locked(version)
        } catch {
            logger.critical("cannot read the registry", metadata: ["error": "\(error)"])
            throw error
        }
        // One executor for the journal's commits and the router's passes: a batch is written, routed and its
        // notifications queued on one thread (in a cluster the router takes nothing from the journal).
        let pipeline = DispatchQueue(label: "sensorhub.pipeline")
        // What the last run applied and had not written everywhere before it stopped (a crash, a power cut): its
        // statuses are the hub's statuses from the start, its events go to the consumers that lack them.
        let journal = Journal(directory: journalDirectory, logger: logger, executor: pipeline)
        let replay: Journal.Replay
        do {
            replay = try journal.open()
        } catch {
            logger.critical("cannot open the journal", metadata: ["error": "\(error)"])
            throw error
        }
        // In a cluster they were committed before they were journaled, and the rows may be newer.
        let registry = store as? PostgresRegistry
        let cluster = registry == nil ? nil : configuration.cluster
        let outbox = cluster.flatMap { cluster in
            configuration.store.map { server in
                ClusterOutbox(
                    database: PostgresOutbox(
                        server: server, hub: configuration.storeHub, agent: cluster.agent,
                        visibility: cluster.lease, logger: logger),
                    logger: logger)
            }
        }
        if outbox == nil {
            for record in replay.records {
                document.record(record)
            }
        }
        if !replay.records.isEmpty {
            logger.notice(
                "replaying the journal", metadata: ["records": "\(replay.records.count)", "path": "\(journal.path)"])
        }
        try? FileManager.default.createDirectory(
            atPath: state.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let started = Date()
        let keeper = configuration.cluster.flatMap { cluster in
            configuration.store.map { server in
                var duties: [LeaseKeeper.Duty] = [.availability]
                if configuration.homeAssistant.enabled { duties.append(.homeAssistant) }
                if configuration.discovery.enabled { duties.append(.discovery) }
                // Sources: each done by one agent, those whose configuration has them taking turns.
                if configuration.sds011.port != nil { duties.append(.sds011(configuration.sds011.name)) }
                duties += configuration.feeds.map { .feed($0.name) }
                if configuration.uv.place != nil { duties.append(.uv(configuration.uv.name)) }
                duties.append(.alerts)
                return LeaseKeeper(
                    database: ClusterDatabase(server: server, settings: cluster, logger: logger), duties: duties,
                    logger: logger)
            }
        }
        let storeWrites = Locked(0)
        let current = Locked(configuration)
        let errors = ErrorRecorder(logger: logger)

        var tracker = SensorTracker(
            defaultSilenceTimeout: configuration.silenceTimeout, maximumStatusLength: configuration.maximumStatusLength)
        tracker.airPolicy = configuration.air
        _ = tracker.follow(document, now: .now)
        tracker.setThresholds(configuration.thresholds)
        tracker.setSessionRules(configuration.sessions)

        let subscriptionInputs = Subscriptions.Inputs()
        // In a cluster: the agent says it is ready once its first share of the partitions is connected (or a lease
        // has passed without).
        let firstShare = Latch()
        var beforeReady: (@Sendable () async -> Void)?
        if let lease = cluster?.lease { beforeReady = { _ = await firstShare.wait(until: .now + lease) } }
        let (clients, clientSink) = AsyncStream.makeStream(of: MosquittoClient.self)
        let connection = BrokerConnection(
            broker: document.broker, stateDirectory: state, configuration: configuration, clients: clientSink,
            subscribe: { await subscriptionInputs.attach($0) }, detach: { subscriptionInputs.detach() },
            restored: { subscriptionInputs.restored($0) },
            beforeReady: beforeReady,
            errors: errors, notifier: notifier, logger: logger)
        // In a cluster the alert book is the database's, kept by one agent at a time.
        let alertBook = keeper.flatMap { keeper in
            configuration.store.map { server in
                ClusterAlertBook(
                    database: PostgresAlertBook(
                        server: server, hub: configuration.storeHub,
                        name: "hubd \(keeper.database.settings.agent) alerts",
                        logger: logger),
                    keeper: keeper)
            }
        }
        let router = try NotificationRouter(
            configuration: notifiers, stateDirectory: state.path, logger: logger,
            publish: { topic, payload, qos, retain, timeout, done in
                connection.publishNotification(
                    topic: topic, payload: payload, qos: MQTTQoS(rawValue: Int32(qos)) ?? .atLeastOnce, retain: retain,
                    timeout: timeout, done: done)
            },
            progress: { journal.acknowledge(NotificationRouter.consumerName, through: $0) }, log: journal,
            shared: outbox,
            sharedAlerts: alertBook, executor: pipeline, lowWear: configuration.lowWear)
        let shared = registry.flatMap { registry in
            outbox.map { outbox in
                SharedIngest(
                    registry: registry, hub: outbox.database.hub,
                    notifications: { events, limits in
                        // The cluster's rate limits, in the step's transaction: one count for all agents.
                        ClusterOutbox.rows(
                            try await router.notifications(for: events) { rule, event in
                                try await limits.allow(
                                    rule: rule.name, sensor: event.sensor, limit: rule.rateLimit ?? .zero,
                                    event: event.id)
                            })
                    },
                    alerting: { router.alertEvents($0) }, outboxChanged: { router.sharedOutboxChanged() })
            }
        }
        // The history: history.sqlite, or with store: the store's database, which a queue like remote:'s feeds. Read
        // before ingest starts, so particulate sensors begin with their last 24 hours.
        let retention: @Sendable () -> Duration = { current.withLock { $0.historyRetention } }
        let history: HistoryWriter?
        let storeHistory: RemoteWriter?
        let historySource: HistorySource
        if let settings = configuration.storeHistory {
            let reader = PostgresHistory(
                server: settings.server, hub: settings.hub, applicationName: "hubd history", logger: logger)
            historySource = .reader(reader)
            history = nil
            await HistoryWriter.seed(&tracker, from: reader, for: document)
            storeHistory = RemoteWriter(
                name: HistoryWriter.consumerName, settings: settings, stateDirectory: state.path, journal: journal,
                pruner: HistoryPruner(retention: retention, delete: reader.prune, errors: errors, logger: logger),
                errors: errors, logger: logger)
        } else {
            storeHistory = nil
            if let file = HistoryWriter.open(state.path, errors: errors) {
                await HistoryWriter.seed(&tracker, from: file, for: document)
                let writer = HistoryWriter(
                    history: file, journal: journal, commitInterval: configuration.historyCommitInterval,
                    retention: retention, errors: errors, logger: logger)
                history = writer
                historySource = .file(directory: state.path, held: writer)
            } else {
                history = nil
                historySource = .file(directory: state.path)
            }
        }
        let remote = configuration.separateRemote.map {
            RemoteWriter(settings: $0, stateDirectory: state.path, journal: journal, errors: errors, logger: logger)
        }
        let discoverer =
            configuration.discovery.enabled
            ? DeviceDiscoverer(
                settings: configuration.discovery, state: state, store: store, journal: journal,
                addsDevices: { keeper?.holds(.discovery) ?? true }, errors: errors, logger: logger)
            : nil
        let homeAssistant =
            configuration.homeAssistant.enabled
            ? HomeAssistantPublisher(
                discovery: HomeAssistantDiscovery(
                    prefix: configuration.homeAssistant.prefix, hubAvailability: configuration.availabilityTopic,
                    hubID: document.broker.clientID, version: SensorHubVersion.current,
                    defaultSilence: configuration.silenceTimeout),
                journal: journal,
                publish: { topic, payload in
                    try await connection.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                }, publishesConfigs: { keeper?.holds(.homeAssistant) ?? true },
                // Each alerting rule an entity, from the hub's book or the cluster's.
                alerts: .init(
                    place: router.alertPlace,
                    changes: { router.alertChanges() },
                    rules: { router.configuration.rules.compactMap { $0.alerting == nil ? nil : $0.name } }),
                logger: logger)
            : nil
        var listeners: [any TopicListener] = []
        if let discoverer { listeners.append(discoverer) }
        if let homeAssistant { listeners.append(homeAssistant) }
        var readingSinks: [any ReadingSink] = []
        if let storeHistory { readingSinks.append(storeHistory) }
        if let remote { readingSinks.append(remote) }
        let ingest = Ingest(
            tracker: tracker, clients: clients, journal: journal, readings: readingSinks, listeners: listeners,
            syncDelay: configuration.syncDelay, shared: shared, errors: errors, logger: logger)
        var following: (@Sendable (DefaultsDocument, Bool) -> Void)?
        if let homeAssistant {
            following = { document, newClient in homeAssistant.followed(document, newClient: newClient) }
        }
        let subscriptions = Subscriptions(
            inputs: subscriptionInputs, store: store, ingest: ingest, connection: connection,
            qos: configuration.qos, listenerFilters: listeners.flatMap(\.filters), followed: following,
            followedVersion: followed, partitions: shared?.partitions,
            mode: configuration.subscribe, errors: errors, logger: logger)
        let sds011 = configuration.sds011.port.map { _ in
            SDS011Source(
                settings: configuration.sds011, store: store, keeper: keeper, errors: errors, logger: logger,
                publish: { topic, payload in
                    try await connection.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                })
        }
        let feeds =
            configuration.feeds.isEmpty
            ? nil
            : FeedSource(
                feeds: configuration.feeds, stateDirectory: state.path, store: store, keeper: keeper, errors: errors,
                logger: logger,
                publish: { topic, payload in
                    try await connection.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                })
        let uv = configuration.uv.place.map { place in
            UVSource(
                settings: configuration.uv, place: place, store: store, stateDirectory: state.path, keeper: keeper,
                errors: errors, logger: logger,
                publish: { topic, payload in
                    try await connection.publish(topic: topic, payload: payload, qos: .atLeastOnce, retain: true)
                })
        }
        let snapshot: HubSnapshot.Source = { statuses in
            var snapshot = HubSnapshot()
            snapshot.started = started
            ingest.fill(&snapshot, statuses: statuses)
            snapshot.counters.journal = journal.statistics
            snapshot.counters.storeWrites = storeWrites.withLock { $0 }
            (snapshot.connection, snapshot.counters.reconnects) = connection.snapshot
            snapshot.counters.sds011 = sds011?.serialLine
            snapshot.counters.feeds = feeds?.statistics
            snapshot.counters.temis = uv?.statistics
            snapshot.counters.discovery = discoverer?.statistics
            snapshot.counters.remote = remote?.forwarder.statistics
            snapshot.counters.history = storeHistory?.forwarder.statistics
            snapshot.lastError = errors.lastError
            snapshot.notifications = router.statistics
            (snapshot.topicTemplate, snapshot.thresholds) = current.withLock { ($0.topicTemplate, $0.thresholds) }
            return snapshot
        }
        let storeWriter = StoreWriter(
            store: store, journal: journal, writes: storeWrites, followedVersion: followed, stateDirectory: state.path,
            flushInterval: configuration.flushInterval,
            snapshot: snapshot, errors: errors,
            logger: logger, recordsStatuses: shared == nil, runtimeDirectory: runtime)
        let reloader = ConfigurationReloader(
            option: configurationOption, current: current, file: file, ingest: ingest, router: router, errors: errors,
            notifier: notifier, logger: logger)
        logger.info(
            "following the registry", metadata: ["state_directory": "\(state.path)", "sensors": "\(tracker.count)"])

        // In a cluster, the statuses and the notifications are in the store before the records reach the journal:
        // the store writer acknowledges them as they come, the router does not take them.
        var consumers: [(name: String, consumer: any JournalConsumer)] = [(StoreWriter.consumerName, storeWriter)]
        if shared == nil { consumers.append((NotificationRouter.consumerName, router)) }
        if let history { consumers.append((HistoryWriter.consumerName, history)) }
        if let storeHistory { consumers.append((storeHistory.name, storeHistory)) }
        if let homeAssistant { consumers.append((HomeAssistantPublisher.consumerName, homeAssistant)) }
        if let remote { consumers.append((remote.name, remote)) }
        journal.attach(consumers)

        var services: [any Service] = [journal, storeWriter]
        // Early, so it stops late: the last to give up the duties the others hold.
        if let keeper { services.append(keeper) }
        if let history { services.append(history) }
        // Stop after ingest, so the last readings reach their queues.
        if let storeHistory { services.append(storeHistory) }
        if let remote { services.append(remote) }
        services.append(router)
        // After the writers it asks, so it stops before them.
        services.append(
            WriteRequestAnswerer(
                directory: state.path, journal: journal,
                writes: [
                    { await storeWriter.writeNow() }, { router.writeBookForReaders() },
                    { await history?.writePending() },
                ]))
        // Before ingest, which hands it devices, and after the journal and the store it writes to.
        if let discoverer { services.append(discoverer) }
        if let homeAssistant { services.append(homeAssistant) }
        services += [ingest, subscriptions, connection]
        // After the connection, so it stops first: what the partitions' sessions took is committed while ingest runs,
        // and they are given up before the agent's own connection says `offline`.
        if let keeper, let shared {
            services.append(
                PartitionKeeper(
                    keeper: keeper, connection: connection, ingest: ingest, shared: shared,
                    subscriptions: subscriptionInputs, firstShare: firstShare, logger: logger))
            services.append(
                ClusterAvailability(
                    keeper: keeper, connection: connection, topic: configuration.availabilityTopic, logger: logger))
        }
        if let sds011 { services.append(sds011) }
        if let feeds { services.append(feeds) }
        if let uv { services.append(uv) }
        services += [reloader, SystemdWatchdog(notifier: notifier)]
        let bases = configuration.discovery.zigbee2mqttBases
        return Hub(
            services: services, snapshot: snapshot, router: router, store: store, stateDirectory: state.path,
            history: historySource, session: { try await ingest.session($0, sensor: $1) },
            discover: { duration in
                try await connection.listen(
                    DeviceDiscovery(families: DeviceFamily.all, zigbee2mqttBases: bases), for: duration)
            })
    }
}

extension NotificationRouter: JournalConsumer {
    /// The name it acknowledges the journal's records under.
    static let consumerName = "router"

    public func accept(_ records: [JournalRecord], through position: Int) {
        submit(records.flatMap(\.events), through: position)
    }

    /// Routes a batch while the journal flushes it: it acknowledges the journal only after the outbox's `fsync`, a
    /// second later (`NotificationRouter+Progress.swift`).
    public var takesWrittenRecords: Bool { true }
}
