import Foundation
import HubCore
import HubHistory
import HubMQTT
import HubNotify
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The agent: follows the registry live, keeps one subscription per sensor, turns messages into statuses and
/// events, notices silence, writes statuses back, and tells systemd how it is doing.
///
/// Tasks and what they own:
/// - the connection loop owns the MQTT client: connect (retrying), hand it to the registry task, publish
///   availability, and replace it when the broker settings change or it dies;
/// - the registry task owns subscriptions: it alone subscribes and unsubscribes, one change at a time, so a
///   new client's "subscribe everything" can't race a removal;
/// - a message task per client ingests messages into the tracker (a lock, no actor hop per message);
/// - timers: silence, store flush, watchdog, status file; and SIGHUP reloads the configuration.
public final class HubService: Service, Sendable {
    let configurationOption: String?
    let stateOption: String?
    let logger: Logger
    let notifier: SystemdNotifier
    let settings: Locked<Settings>
    let tracker: Locked<SensorTracker>
    let counters = Locked(AgentStatus.Counters())
    let connection: Locked<ConnectionState>
    let lastError = Locked<AgentStatus.LastError?>(nil)
    let started = Date()
    let rejectionLog = Locked<[Rejection: LogThrottle]>([:])
    /// Where every sensor event goes: rules, the outbox, the backends.
    public let router: NotificationRouter
    /// Where the periodic store and status writes run: they block (flock, fsync), and must not do so on a
    /// cooperative thread (measured: a 230 ms p99 at 1k msg/s in one run out of two, 2.5 ms without).
    let files = DispatchQueue(label: "sensorhub.files")
    /// Readings and events waiting to be written to the history.
    let pendingHistory = Locked<(readings: [(sensor: String, reading: ParticulateReading)], events: [SensorEvent])>(
        ([], []))

    struct Settings: Sendable {
        var configuration: HubConfiguration
        var state: StateDirectory
        var broker: BrokerSettings
    }

    struct ConnectionState: Sendable {
        var client: MosquittoClient?
        var connected = false
        var since: Date?
        var broker = ""
        /// The connection loop waiting for a reason to act (shutdown, new broker settings, a dead client).
        var wake: CheckedContinuation<Void, Never>?
        /// A wake that came while nobody waited; the next wait returns at once.
        var wakePending = false
        var brokerChanged = false
    }

    public init(
        configuration: HubConfiguration,
        configurationOption: String?,
        notifiers: NotifierConfiguration = .default,
        state: StateDirectory,
        logger: Logger,
        notifier: SystemdNotifier = SystemdNotifier()
    ) throws(ConfigurationError) {
        self.configurationOption = configurationOption
        self.stateOption = state.source == .option ? state.path : nil
        self.logger = logger
        self.notifier = notifier
        self.settings = Locked(Settings(configuration: configuration, state: state, broker: BrokerSettings()))
        var tracker = SensorTracker(
            defaultSilenceTimeout: configuration.silenceTimeout, maximumStatusLength: configuration.maximumStatusLength)
        tracker.airPolicy = configuration.air
        self.tracker = Locked(tracker)
        // The mqtt backend publishes over whichever client is connected at the time.
        let connection = Locked(ConnectionState())
        self.connection = connection
        self.router = try NotificationRouter(
            configuration: notifiers, stateDirectory: state.path, logger: logger,
            publish: { topic, payload, qos, retain in
                guard let client = connection.withLock({ $0.connected ? $0.client : nil }) else {
                    throw MosquittoError.notConnected(operation: "publish")
                }
                try await client.publish(
                    topic: topic, payload: payload, qos: MQTTQoS(rawValue: Int32(qos)) ?? .atLeastOnce, retain: retain)
            })
    }

    var store: DefaultsStore { settings.withLock { $0.state.store } }
    var configuration: HubConfiguration { settings.withLock { $0.configuration } }

    // MARK: - Run

    public func run() async throws {
        let state = settings.withLock { $0.state }
        // The registry must be readable to start: a damaged file is the user's to fix, not ours to guess around.
        let document: DefaultsDocument
        do {
            document = try state.store.read()
        } catch {
            logger.critical("cannot read the registry", metadata: ["error": "\(error)"])
            throw error
        }
        try? FileManager.default.createDirectory(
            atPath: state.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        settings.withLock { $0.broker = document.broker }
        _ = tracker.withLock { $0.follow(document, now: .now) }
        let history = openHistory(state, document)
        logger.info(
            "following the registry",
            metadata: ["state_directory": "\(state.path)", "sensors": "\(document.sensors.count)"])

        let (registryInputs, registryContinuation) = AsyncStream.makeStream(of: RegistryInput.self)
        let changes = RegistryWatcher.changes(of: state.store.path, logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followRegistry(registryInputs) }
            group.addTask {
                for await _ in changes { registryContinuation.yield(.storeChanged) }
            }
            group.addTask { await self.router.run() }
            group.addTask { await self.every(.milliseconds(250)) { self.checkSilence() } }
            group.addTask {
                await self.every(self.configuration.flushInterval) { await self.files.run { self.flush() } }
            }
            group.addTask { await self.every(.seconds(5)) { await self.files.run { self.writeStatus() } } }
            if let interval = notifier.watchdogInterval {
                group.addTask { await self.every(interval) { self.notifier.watchdog() } }
            }
            group.addTask { await self.reloadOnHangUp() }
            if let history {
                group.addTask {
                    await self.every(self.configuration.flushInterval) { await self.writeHistory(history) }
                }
                group.addTask { await self.every(.seconds(86_400)) { await self.pruneHistory(history) } }
            }
            if configuration.sds011.port != nil {
                group.addTask { await self.sds011Reader().run() }
            }
            // The connection loop returns on graceful shutdown, after 'offline' went out and the client closed.
            await connectionLoop(registry: registryContinuation)
            notifier.stopping()
            group.cancelAll()
        }
        registryContinuation.finish()
        // Whatever arrived until the client closed is in the tracker now: write it.
        flush()
        if let history { await writeHistory(history) }
        writeStatus()
        logger.info("stopped")
    }

    /// Runs `action` every `interval` until graceful shutdown or cancellation.
    func every(_ interval: Duration, _ action: @Sendable () async -> Void) async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            await action()
        }
    }

    // MARK: - The connection

    enum RegistryInput: Sendable {
        case storeChanged
        /// A newly connected client: subscribe it to every sensor, then say so.
        case attach(MosquittoClient, ResumeOnce)
        case detach
    }

    /// Keeps a connected client for the broker the registry names, until graceful shutdown.
    private func connectionLoop(registry: AsyncStream<RegistryInput>.Continuation) async {
        var announcedReady = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let (broker, configuration) = settings.withLock { ($0.broker, $0.configuration) }
            connection.withLock { $0.brokerChanged = false }
            guard let client = await connectUntilReady(broker, configuration) else { continue }
            // Resumed by the registry task once subscribed, or at once if that task is gone or this one is
            // cancelled: a continuation that nobody resumes would hang the loop (and leak).
            let subscribed = ResumeOnce()
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    subscribed.set(continuation)
                    if case .terminated = registry.yield(.attach(client, subscribed)) { subscribed.resume() }
                }
            } onCancel: {
                subscribed.resume()
            }
            // Connected means following: the status file says so only once a status published now would arrive.
            connection.withLock {
                $0.client = client
                $0.connected = true
                $0.since = Date()
                $0.broker = "\(broker.host):\(broker.port)"
            }
            await announce(client, "online", configuration)
            let sensors = tracker.withLock { $0.count }
            if !announcedReady {
                notifier.ready("Connected to \(broker.host):\(broker.port), following \(sensors) sensors")
                logger.notice("ready", metadata: ["broker": "\(broker.host):\(broker.port)", "sensors": "\(sensors)"])
                announcedReady = true
            }
            writeStatus()
            clearWake()
            // Until the client dies, the broker settings change, or the service is asked to stop.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.ingest(client) }
                group.addTask { await self.watchEvents(client, configuration) }
                group.addTask { await self.waitForWakeOrShutdown() }
                await group.next()
                registry.yield(.detach)
                if Task.isShuttingDownGracefully || connection.withLock({ $0.brokerChanged }) {
                    await announce(client, "offline", configuration)
                }
                await client.disconnect()
                connection.withLock {
                    $0.client = nil
                    $0.connected = false
                }
                wake()
                await group.waitForAll()
            }
            writeStatus()
        }
    }

    /// Connects, retrying with back-off until it works, the broker settings change or the service stops.
    private func connectUntilReady(_ broker: BrokerSettings, _ configuration: HubConfiguration) async
        -> MosquittoClient?
    {
        var attempt = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let client = MosquittoClient(configuration: mosquittoConfiguration(broker, configuration), logger: logger)
            do {
                try await client.connect()
                return client
            } catch {
                // Cancelled (the service group is going down): no retry, and no error to report.
                if Task.isCancelled { return nil }
                attempt += 1
                let delay = Duration.seconds(min(30, 1 << min(attempt - 1, 5)))
                record("cannot connect to the MQTT broker at \(broker.host):\(broker.port): \(error)")
                logger.warning(
                    "cannot connect to the MQTT broker; retrying",
                    metadata: ["broker": "\(broker.host):\(broker.port)", "error": "\(error)", "retry_in": "\(delay)"])
                // Wake early when the settings change (hubctl broker set) or the service stops.
                clearWake()
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { try? await Task.sleep(for: delay) }
                    group.addTask { await self.waitForWakeOrShutdown() }
                    await group.next()
                    self.wake()
                    group.cancelAll()
                }
                clearWake()
                if connection.withLock({ $0.brokerChanged }) { return nil }
            }
        }
        return nil
    }

    private func mosquittoConfiguration(_ broker: BrokerSettings, _ configuration: HubConfiguration)
        -> MosquittoConfiguration
    {
        let password: String?
        do {
            password = try settings.withLock { $0.state }.brokerPassword(for: broker)
        } catch {
            record("cannot read the broker password in \(error.path)")
            password = nil
        }
        var mqtt = broker.mosquittoConfiguration(password: password)
        mqtt.will = .init(topic: configuration.availabilityTopic, payload: "offline", qos: .atLeastOnce, retain: true)
        // Messages wait in the client, not in the broker, only briefly: a generous buffer, counted if it overflows.
        mqtt.messageBufferLimit = 1_000_000
        return mqtt
    }

    private func announce(_ client: MosquittoClient, _ availability: String, _ configuration: HubConfiguration) async {
        do {
            try await client.publish(
                topic: configuration.availabilityTopic, payload: availability, qos: .atLeastOnce, retain: true)
            logger.info("published availability", metadata: ["status": "\(availability)"])
        } catch {
            record("could not publish availability '\(availability)': \(error)")
        }
    }

    /// Follows connection changes: a reconnect re-announces `online` (a broker restarted without persistence has
    /// forgotten it) once the subscriptions are back; a client that dies for good wakes the connection loop to make
    /// a new one.
    private func watchEvents(_ client: MosquittoClient, _ configuration: HubConfiguration) async {
        for await event in client.events {
            switch event {
            case .connected:
                // The first connection is announced by the connection loop; a reconnect once its subscriptions
                // are restored (the client always says so after a reconnect, with a count of 0 when there are none).
                counters.withLock { $0.reconnects = Int(client.statistics.reconnects) }
            case .disconnected(let error):
                connection.withLock { $0.connected = false }
                record("connection to the broker lost: \(error)")
            case .subscriptionsRestored(let count, let refused):
                logger.info("subscriptions restored", metadata: ["count": "\(count)", "refused": "\(refused)"])
                if !refused.isEmpty { record("the broker refused the subscriptions to \(refused)") }
                // Connected means following, as after the first connection.
                connection.withLock {
                    $0.connected = true
                    $0.since = Date()
                }
                await announce(client, "online", configuration)
            case .reconnectFailed:
                break
            case .closed(let error):
                if let error { record("the MQTT client stopped: \(error)") }
                wake()
                return
            }
        }
    }

    /// Waits until woken (new broker settings, a client that died) or the service is asked to stop.
    private func waitForWakeOrShutdown() async {
        await withGracefulShutdownHandler {
            await self.waitForWake()
        } onGracefulShutdown: {
            self.wake()
        }
    }

    private func waitForWake() async {
        await withCheckedContinuation { continuation in
            let wakeNow = connection.withLock { state -> Bool in
                if state.brokerChanged || state.wakePending {
                    state.wakePending = false
                    return true
                }
                state.wake = continuation
                return false
            }
            if wakeNow { continuation.resume() }
        }
    }

    private func wake() {
        connection.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.wake else {
                state.wakePending = true
                return nil
            }
            state.wake = nil
            return waiter
        }?.resume()
    }

    /// Forgets wakes meant for an earlier wait (the graceful-shutdown handler fires again for a new one).
    private func clearWake() {
        connection.withLock { $0.wakePending = false }
    }

    // MARK: - The registry and subscriptions

    /// The only task that changes subscriptions: store changes and new clients, one at a time.
    private func followRegistry(_ inputs: AsyncStream<RegistryInput>) async {
        var client: MosquittoClient?
        for await input in inputs {
            switch input {
            case .storeChanged:
                await applyStore(to: client)
            case .attach(let newClient, let done):
                client = newClient
                // Changes made while there was no client are in the store: read it first.
                await applyStore(to: nil)
                let topics = tracker.withLock { $0.topics }
                await subscribe(topics, on: newClient)
                done.resume()
            case .detach:
                client = nil
            }
        }
    }

    /// Reads the store and follows it: subscriptions for added and removed sensors, a reconnect for new broker
    /// settings. A damaged store is reported and the last good registry kept.
    private func applyStore(to client: MosquittoClient?) async {
        let document: DefaultsDocument
        do {
            document = try store.read()
        } catch {
            record("the registry can't be read, so changes to it are not followed: \(error)")
            return
        }
        let delta = tracker.withLock { $0.follow(document, now: .now) }
        if let client, !delta.isEmpty {
            await subscribe(delta.subscribe, on: client)
            if !delta.unsubscribe.isEmpty {
                do {
                    try await client.unsubscribe(delta.unsubscribe)
                } catch {
                    record("could not unsubscribe from \(delta.unsubscribe.count) topics: \(error)")
                }
            }
            logger.info(
                "followed the registry",
                metadata: ["subscribed": "\(delta.subscribe.count)", "unsubscribed": "\(delta.unsubscribe.count)"])
        }
        let changed = settings.withLock { settings -> Bool in
            guard settings.broker != document.broker else { return false }
            settings.broker = document.broker
            return true
        }
        if changed {
            logger.notice(
                "the broker settings changed; reconnecting",
                metadata: ["broker": "\(document.broker.host):\(document.broker.port)"])
            connection.withLock { $0.brokerChanged = true }
            wake()
        }
        writeStatus()
    }

    private func subscribe(_ topics: [String], on client: MosquittoClient) async {
        guard !topics.isEmpty else { return }
        let qos = MQTTQoS(rawValue: Int32(configuration.qos)) ?? .atLeastOnce
        do {
            try await client.subscribe(topics, qos: qos)
        } catch {
            record("could not subscribe to \(topics.count) topics: \(error)")
        }
    }

    // MARK: - Messages

    /// Ingests every message of `client` until it closes.
    private func ingest(_ client: MosquittoClient) async {
        for await message in client.messages {
            let outcome = tracker.withLock {
                $0.ingest(
                    topic: message.topic, payload: message.payload, retained: message.retain, time: .now,
                    now: .now)
            }
            switch outcome {
            case .event(let event):
                counters.withLock {
                    $0.messages += 1
                    $0.changes += 1
                }
                notify(event)
            case .particulate(let reading, let sensor, let events):
                counters.withLock {
                    $0.messages += 1
                    $0.changes += events.count
                }
                pendingHistory.withLock { $0.readings.append((sensor, reading)) }
                for event in events { notify(event) }
            case .unchanged:
                counters.withLock { $0.messages += 1 }
            case .rejected(let reason):
                counters.withLock {
                    $0.messages += 1
                    $0.rejected[reason.rawValue, default: 0] += 1
                }
                noteRejection(reason, topic: message.topic, size: message.payload.count)
            }
        }
    }

    /// Logs a rejected message: the first of each kind, then at most one line every ten seconds with a count.
    private func noteRejection(_ reason: Rejection, topic: String, size: Int) {
        let report = rejectionLog.withLock { $0[reason, default: LogThrottle()].note() }
        if let report {
            logger.warning(
                "rejected a message",
                metadata: [
                    "reason": "\(reason.rawValue)", "topic": "\(topic)", "bytes": "\(size)",
                    "rejected_since_last_report": "\(report)",
                ])
        }
    }

    /// Hands an event to the notification router (which never blocks).
    private func notify(_ event: SensorEvent) {
        logger.info(
            "sensor event",
            metadata: [
                "sensor": "\(event.sensor)", "event": "\(event.kind.rawValue)", "from": "\(event.oldStatus)",
                "to": "\(event.newStatus)", "topic": "\(event.topic)",
            ])
        router.submit(event)
        pendingHistory.withLock { $0.events.append(event) }
    }

    private func checkSilence() {
        let events = tracker.withLock { $0.checkSilence(now: .now, time: .now) }
        for event in events {
            counters.withLock { $0.changes += 1 }
            notify(event)
        }
    }

    // MARK: - Writing back

    /// Merges the statuses received since the last flush into the store, under its lock: a `hubctl` change made
    /// meanwhile stays, and a sensor removed meanwhile is skipped.
    func flush() {
        let dirty = tracker.withLock { $0.takeDirty() }
        guard !dirty.isEmpty else { return }
        do {
            try store.update { document throws(RegistryError) in
                for entry in dirty {
                    document.recordStatus(entry.status, lastUpdated: entry.lastUpdated, onTopic: entry.topic)
                }
            }
            counters.withLock { $0.storeWrites += 1 }
        } catch {
            tracker.withLock { $0.markDirty(dirty.map(\.topic)) }
            record("could not write statuses to the registry: \(error)")
        }
    }

    // MARK: - Status, errors, reload

    /// Remembers an error for `hubctl status` and logs it.
    func record(_ message: String) {
        logger.error("\(message)")
        lastError.withLock { $0 = AgentStatus.LastError(time: Date(), message: message) }
    }

    func writeStatus() {
        let (state, _) = settings.withLock { ($0.state, $0.broker) }
        let connection = connection.withLock { $0 }
        var status = AgentStatus(
            pid: getpid(), version: SensorHubVersion.current, started: started, broker: connection.broker)
        status.updated = Date()
        status.connected = connection.connected
        status.connectedSince = connection.connected ? connection.since : nil
        status.sensors = tracker.withLock { $0.count }
        status.counters = counters.withLock { $0 }
        status.lastError = lastError.withLock { $0 }
        let notifications = router.statistics
        status.notifications = AgentStatus.Notifications(
            pending: notifications.outboxPending, suppressed: notifications.router.suppressed,
            backends: notifications.backends)
        do {
            try status.write(to: state.path)
        } catch {
            logger.debug("could not write the status file", metadata: ["error": "\(error)"])
        }
    }

    /// SIGHUP: reads the configuration again and applies what can change while running.
    private func reloadOnHangUp() async {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals {
            notifier.reloading()
            do {
                let new = try HubConfiguration.load(option: configurationOption)
                let old = settings.withLock { settings in
                    defer { settings.configuration = new }
                    return settings.configuration
                }
                if let level = Logger.Level(rawValue: new.logLevel) {
                    HubLogHandler.level.store(level.index, ordering: .relaxed)
                }
                tracker.withLock {
                    $0.maximumStatusLength = new.maximumStatusLength
                    $0.setDefaultSilenceTimeout(new.silenceTimeout, now: .now)
                }
                var later: [String] = []
                if new.qos != old.qos { later.append("sensors.qos") }
                if new.stateDirectory != old.stateDirectory { later.append("state.directory") }
                if new.flushInterval != old.flushInterval { later.append("store.flush_interval") }
                if new.availabilityTopic != old.availabilityTopic { later.append("hub.availability_topic") }
                logger.notice(
                    "configuration reloaded",
                    metadata: later.isEmpty ? [:] : ["applies_after_restart": "\(later.joined(separator: ", "))"])
            } catch {
                record("configuration not reloaded, the running one stays: \(error)")
            }
            notifier.ready("Reloaded")
        }
    }
}
