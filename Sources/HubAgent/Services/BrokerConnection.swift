import Foundation
import HubCore
import HubMQTT
import HubSupport
import Logging
import Mosquitto
import ServiceLifecycle

/// Keeps one connected client for the broker the registry names: connects (retrying with back-off), has the
/// subscriptions made before it says it is connected, publishes the hub's availability (`online`, and `offline`
/// when it stops; the broker publishes its last will if it dies), and replaces the client when the broker settings
/// change or the client dies for good.
///
/// Each client goes to ingest through `clients`; the stream finishes when this service stops.
final class BrokerConnection: Service, Sendable {
    let state: Locked<State>
    private let stateDirectory: StateDirectory
    private let configuration: HubConfiguration
    private let clients: AsyncStream<MosquittoClient>.Continuation
    /// Makes a new client's subscriptions; returns once they are made.
    private let subscribe: @Sendable (MosquittoClient) async -> Void
    /// Says the client is gone (no subscriptions to keep up).
    private let detach: @Sendable () -> Void
    /// Says the client reconnected and has its subscriptions back.
    private let restored: @Sendable (MosquittoClient) -> Void
    /// Waited for once the client has subscribed, before the hub says it is online (a cluster agent: its first
    /// share of the partitions connected).
    private let beforeReady: (@Sendable () async -> Void)?
    let errors: ErrorRecorder
    private let notifier: SystemdNotifier
    let logger: Logger
    /// The `mqtt` backend's own client (`BrokerConnection+Notifications.swift`).
    let notificationState = Locked(NotificationClient())

    struct State: Sendable {
        var broker: BrokerSettings
        var client: MosquittoClient?
        var connected = false
        var since: Date?
        var endpoint = ""
        var reconnects = 0
        /// The connection loop waiting for a reason to act (shutdown, new broker settings, a dead client).
        var wake: CheckedContinuation<Void, Never>?
        /// A wake that came while nobody waited; the next wait returns at once.
        var wakePending = false
        var brokerChanged = false
    }

    init(
        broker: BrokerSettings, stateDirectory: StateDirectory, configuration: HubConfiguration,
        clients: AsyncStream<MosquittoClient>.Continuation,
        subscribe: @escaping @Sendable (MosquittoClient) async -> Void, detach: @escaping @Sendable () -> Void,
        restored: @escaping @Sendable (MosquittoClient) -> Void, beforeReady: (@Sendable () async -> Void)? = nil,
        errors: ErrorRecorder, notifier: SystemdNotifier, logger: Logger
    ) {
        self.beforeReady = beforeReady
        self.state = Locked(State(broker: broker))
        self.stateDirectory = stateDirectory
        self.configuration = configuration
        self.clients = clients
        self.subscribe = subscribe
        self.detach = detach
        self.restored = restored
        self.errors = errors
        self.notifier = notifier
        self.logger = logger
    }

    /// The connection as snapshots show it.
    var snapshot: (connection: HubSnapshot.Connection, reconnects: Int) {
        state.withLock {
            // Not connected: the broker it is trying (before the first connection too).
            let broker = $0.connected ? $0.endpoint : "\($0.broker.host):\($0.broker.port)"
            return (HubSnapshot.Connection(connected: $0.connected, since: $0.since, broker: broker), $0.reconnects)
        }
    }

    /// Publishes over the connected client; throws when there is none.
    func publish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws {
        guard let client = state.withLock({ $0.connected ? $0.client : nil }) else {
            throw MosquittoError.notConnected(operation: "publish")
        }
        try await client.publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    /// New broker settings from the registry (`hubctl broker set`): reconnect to them.
    func follow(_ broker: BrokerSettings) {
        let changed = state.withLock { state -> Bool in
            guard state.broker != broker else { return false }
            state.broker = broker
            state.brokerChanged = true
            return true
        }
        guard changed else { return }
        logger.notice(
            "the broker settings changed; reconnecting", metadata: ["broker": "\(broker.host):\(broker.port)"])
        wake()
    }

    // MARK: - Run

    /// Until graceful shutdown: then `offline` is published, the client closed, and `clients` finished.
    func run() async {
        var announcedReady = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let broker = state.withLock {
                $0.brokerChanged = false
                return $0.broker
            }
            guard let client = await connectUntilReady(broker) else { continue }
            clients.yield(client)
            await subscribe(client)
            await beforeReady?()
            // Connected means following: the status file says so only once a status published now would arrive.
            state.withLock {
                $0.client = client
                $0.connected = true
                $0.since = Date()
                $0.endpoint = "\(broker.host):\(broker.port)"
            }
            await announce(client, "online")
            if !announcedReady {
                let sensors = client.subscriptions.count
                notifier.ready("Connected to \(broker.host):\(broker.port), following \(sensors) sensors")
                logger.notice("ready", metadata: ["broker": "\(broker.host):\(broker.port)", "sensors": "\(sensors)"])
                announcedReady = true
            }
            clearWake()
            // Until the client dies, the broker settings change, or the service is asked to stop.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.watchEvents(client) }
                group.addTask { await self.waitForWakeOrShutdown() }
                await group.next()
                detach()
                if Task.isShuttingDownGracefully || state.withLock({ $0.brokerChanged }) {
                    await announce(client, "offline")
                }
                await client.disconnect()
                state.withLock {
                    $0.client = nil
                    $0.connected = false
                }
                wake()
                await group.waitForAll()
            }
        }
        clients.finish()
        await closeNotificationClient()
    }

    /// Connects, retrying with back-off until it works, the broker settings change or the service stops.
    private func connectUntilReady(_ broker: BrokerSettings) async -> MosquittoClient? {
        var attempt = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let client = MosquittoClient(configuration: mosquittoConfiguration(broker), logger: logger)
            do {
                try await client.connect()
                return client
            } catch {
                // Cancelled (the service group is going down): no retry, and no error to report.
                if Task.isCancelled { return nil }
                attempt += 1
                let delay = Duration.seconds(min(30, 1 << min(attempt - 1, 5)))
                errors.record("cannot connect to the MQTT broker at \(broker.host):\(broker.port): \(error)")
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
                if state.withLock({ $0.brokerChanged }) { return nil }
            }
        }
        return nil
    }

    /// Listens for devices with `discovery`'s filters on a short connection of its own (the broker hubd uses, a
    /// client id of its own, a clean session, no will), the retained messages and then `duration` of live ones.
    func listen(_ discovery: DeviceDiscovery, for duration: Duration) async throws -> DeviceDiscovery {
        var broker = state.withLock { $0.broker }
        let password = try? stateDirectory.brokerPassword(for: broker)
        broker.clientID = "\(broker.clientID)-discover-\(UUID().uuidString.prefix(8))"
        var mqtt = broker.mosquittoConfiguration(password: password)
        mqtt.cleanSession = true
        mqtt.operationTimeout = .seconds(10)
        let heard = Locked(discovery)
        try await MosquittoClient.withConnection(configuration: mqtt, logger: logger) { client in
            try await client.receive(subscribing: [discovery.listFilters, discovery.stateFilters], for: duration) {
                message in
                heard.withLock { _ = $0.take(topic: message.topic, payload: message.payload, retained: message.retain) }
            }
        }
        return heard.withLock { $0 }
    }

    func mosquittoConfiguration(_ broker: BrokerSettings) -> MosquittoConfiguration {
        let password: String?
        do {
            password = try stateDirectory.brokerPassword(for: broker)
        } catch {
            errors.record("cannot read the broker password in \(error.path)")
            password = nil
        }
        var mqtt = broker.mosquittoConfiguration(password: password)
        mqtt.will = .init(topic: configuration.availabilityTopic, payload: "offline", qos: .atLeastOnce, retain: true)
        // Messages wait in the client, not in the broker, only briefly: a generous buffer, counted if it overflows.
        mqtt.messageBufferLimit = 1_000_000
        // A status acknowledged to the broker only once the journal has it: a SIGKILL can't lose one the broker
        // counts as delivered (`HubConfiguration.acknowledgeWhenJournaled`, on by default).
        mqtt.holdsAcknowledgements = configuration.acknowledgeWhenJournaled
        // MQTT 5 for its Receive Maximum. While the network thread waits for the journal's fsync, an MQTT 3.1.1
        // client has at most the broker's max_inflight_messages (20) sent to it, so hubd took 20 messages a
        // commit, and Mosquitto queued 1,000 more (max_queued_messages) and dropped the rest: a mobile sensor's
        // 1,681 readings published at once lost some (RouteHubTests in CI, 2026-11-28). Not 65,535: Mosquitto
        // 2.0.11 counts messages in flight against the queue of a client that is away (a hubd killed mid-burst
        // would come back to a full queue), and 2.0.16+ drops a message once 1,000 packets wait to be written to
        // a client. 200 takes ten times the batch, and leaves 800 of the queue.
        mqtt.protocolVersion = .v5
        mqtt.receiveMaximum = Self.receiveMaximum
        mqtt.fallsBackToV311 = true
        // Back soon after a broker restart: while hubd is away the broker queues at most max_queued_messages (1,000
        // by default) for it and drops the rest. libmosquitto's reconnect waits 1 s, then 2, 4, 8…: a broker down
        // 10 s had hubd back 2–4 s after it (FaultTests, 2026-11-28); at most 2 s (±20 %) now. One hub's attempts
        // every 2 s cost the broker nothing.
        mqtt.reconnectDelay = .milliseconds(250)...(.seconds(2))
        if let cluster = configuration.cluster {
            // An agent's own connection publishes (availability, Home Assistant, notifications) and hears the
            // listeners' topics; the sensors' messages come through the partitions' sessions. Clean: an older
            // version's shared subscriptions must not live on in a kept session and bring sensors' messages here.
            mqtt.clientID = "\(broker.clientID)-\(cluster.agent)"
            mqtt.cleanSession = true
            mqtt.holdsAcknowledgements = false
        }
        return mqtt
    }

    /// A client for a cluster partition's session (`ClusterPartitions`): its own client id, kept by the broker while
    /// nobody holds the partition (clean session off), acknowledgements held until a step has committed what the
    /// messages changed, and no will (the hub's availability is each agent's own connection's to say). Never
    /// acknowledged without a commit: while the database is away the broker keeps the partition's messages (up to its
    /// `max_queued_messages`), and a client closed (its lease ran out, or given up) leaves what it had not committed
    /// to the partition's next holder.
    func partitionConfiguration(_ partition: Int) -> MosquittoConfiguration? {
        guard let cluster = configuration.cluster else { return nil }
        let broker = state.withLock { $0.broker }
        var mqtt = mosquittoConfiguration(broker)
        mqtt.clientID = Self.partitionClientID(broker.clientID, group: cluster.group, partition: partition)
        mqtt.cleanSession = false
        mqtt.will = nil
        mqtt.holdsAcknowledgements = true
        mqtt.leavesUnconfirmedOnStop = true
        mqtt.confirmationTimeout = .seconds(24 * 3600)
        return mqtt
    }

    /// The QoS 1/2 messages hubd lets the broker have in flight to it, unacknowledged (MQTT 5's Receive Maximum).
    static let receiveMaximum = 200

    /// `<client id>-<group>-p07`: the same at every agent of the group, whichever holds the partition.
    static func partitionClientID(_ clientID: String, group: String, partition: Int) -> String {
        "\(clientID)-\(group)-p" + (partition < 10 ? "0" : "") + "\(partition)"
    }

    private func announce(_ client: MosquittoClient, _ availability: String) async {
        do {
            try await client.publish(
                topic: configuration.availabilityTopic, payload: availability, qos: .atLeastOnce, retain: true)
            logger.info("published availability", metadata: ["status": "\(availability)"])
        } catch {
            errors.record("could not publish availability '\(availability)': \(error)")
        }
    }

    /// Follows connection changes: a reconnect re-announces `online` (a broker restarted without persistence has
    /// forgotten it) once the subscriptions are back; a client that dies for good wakes the loop to make a new one.
    private func watchEvents(_ client: MosquittoClient) async {
        for await event in client.events {
            switch event {
            case .connected:
                // The first connection is announced by the loop; a reconnect once its subscriptions are restored
                // (the client always says so after a reconnect, with a count of 0 when there are none).
                state.withLock { $0.reconnects = Int(client.statistics.reconnects) }
            case .disconnected(let error):
                state.withLock { $0.connected = false }
                errors.record("connection to the broker lost: \(error)")
            case .subscriptionsRestored(let count, let refused):
                logger.info("subscriptions restored", metadata: ["count": "\(count)", "refused": "\(refused)"])
                if !refused.isEmpty { errors.record("the broker refused the subscriptions to \(refused)") }
                restored(client)
                // Connected means following, as after the first connection.
                state.withLock {
                    $0.connected = true
                    $0.since = Date()
                }
                await announce(client, "online")
            case .reconnectFailed:
                break
            case .closed(let error):
                if let error { errors.record("the MQTT client stopped: \(error)") }
                wake()
                return
            }
        }
    }

    // MARK: - Waking the loop

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
            let wakeNow = state.withLock { state -> Bool in
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
        state.withLock { state -> CheckedContinuation<Void, Never>? in
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
        state.withLock { $0.wakePending = false }
    }
}
