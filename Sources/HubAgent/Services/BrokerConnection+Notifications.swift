import DequeModule
import HubCore
import HubNotify
import Logging
import Mosquitto

/// The `mqtt` backend publishes over a client of its own, made at its first notification: on the hub's client a
/// notification waited behind the acknowledgements the network thread holds until the journal's `fsync` (it writes
/// nothing while it waits, and the PUBACKs it holds are queued ahead of anything published meanwhile), so every
/// notification to MQTT paid for an `fsync` that other backends no longer wait for. Same broker and credentials,
/// the hub's client id with `-notify`, a clean session and no will; its statuses are the hub's client's to say.
/// A broker that refuses that client (an ACL on client ids) gets the notifications over the hub's client, as before.
extension BrokerConnection {
    /// The notification client as the connection keeps it.
    typealias Connecting = Task<MosquittoClient?, any Error>

    struct NotificationClient {
        /// The settings it was made for: new ones make a new client.
        var broker: BrokerSettings?
        /// Connecting, then connected; its client is `nil` when the broker refused it (the hub's client publishes).
        var client: Connecting?
        /// The client the last notification went out on, connected: the next starts there at once.
        var ready: MosquittoClient?
        /// Notifications waiting for a client (the first ones, while it connects), in order, and whether a task is
        /// sending them.
        var waiting: Deque<Publish> = []
        var sending = false
        /// Set when the hub stops: no client is made after that.
        var stopped = false
    }

    struct Publish {
        var topic: String
        var payload: [UInt8]
        var qos: MQTTQoS
        var retain: Bool
        var timeout: Duration
        var done: @Sendable ((any Error)?) -> Void
    }

    /// Publishes a notification; `done` is told once, nil when the broker has it, else why not (the backend's queue
    /// tries again, or gives up on `PublishRefused`). On a connected client it starts from the caller's thread and
    /// is answered on that client's network thread, with no task; the first ones wait for the client to connect,
    /// in a task that keeps their order.
    func publishNotification(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, timeout: Duration,
        done: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let publish = Publish(topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout, done: done)
        // The hub's settings as they are now: a client made for others (`hubctl broker set`) is not ready.
        let broker = state.withLock { $0.connected ? $0.broker : nil }
        let (ready, send) = notificationState.withLock { current -> (MosquittoClient?, Bool) in
            if current.waiting.isEmpty && !current.sending, broker != nil && current.broker == broker,
                let ready = current.ready, ready.isConnected
            {
                return (ready, false)
            }
            current.waiting.append(publish)
            defer { current.sending = true }
            return (nil, !current.sending)
        }
        if let ready {
            Self.start(publish, on: ready)
        } else if send {
            Task { await sendWaiting() }
        }
    }

    /// Sends the notifications waiting, in order, once a client is connected for them.
    private func sendWaiting() async {
        while true {
            let next = notificationState.withLock { current -> Publish? in
                guard !current.waiting.isEmpty else {
                    current.sending = false
                    return nil
                }
                return current.waiting.removeFirst()
            }
            guard let next else { return }
            do {
                let client = try await sendingClient()
                notificationState.withLock { $0.ready = client }
                Self.start(next, on: client)
            } catch {
                next.done(error)
            }
        }
    }

    private static func start(_ publish: Publish, on client: MosquittoClient) {
        client.publish(
            topic: publish.topic, payload: publish.payload, qos: publish.qos, retain: publish.retain,
            timeout: publish.timeout
        ) { error in
            guard let error else { return publish.done(nil) }
            publish.done(error.isPublishRefusedForGood ? PublishRefused("\(error)") : error)
        }
    }

    /// The client notifications go out on, connected: the notification client, or the hub's when the broker
    /// refused that one. Throws when there is none now.
    private func sendingClient() async throws -> MosquittoClient {
        // Not before the hub's own client has connected (the settings work), nor once it has stopped.
        guard
            let (hub, broker) = state.withLock({ state in
                state.connected ? state.client.map { ($0, state.broker) } : nil
            })
        else {
            throw MosquittoError.notConnected(operation: "publish")
        }
        let client = try await notificationClient(broker) ?? hub
        // Disconnected for now: a publish would wait for the reconnect and then go out beside the queue's retry.
        guard client.isConnected else { throw MosquittoError.notConnected(operation: "publish") }
        return client
    }

    /// The notification client for `broker`, connected once for all the publishes that wait for it; made again after
    /// it stopped for good or could not connect, and for new settings. `nil` when the broker refused it.
    private func notificationClient(_ broker: BrokerSettings) async throws -> MosquittoClient? {
        let (connecting, replaced) = try notificationState.withLock { current throws in
            if current.stopped { throw MosquittoError.closed(operation: "publish") }
            if current.broker == broker, let client = current.client { return (client, Connecting?.none) }
            let replaced = current.client
            let made = makeNotificationClient(notificationConfiguration(broker))
            (current.broker, current.client, current.ready) = (broker, made, nil)
            return (made, replaced)
        }
        if let replaced { Task { try? await replaced.value?.disconnect() } }
        do {
            let client = try await connecting.value
            if client?.isClosed != true { return client }
            throw MosquittoError.notConnected(operation: "publish")
        } catch {
            notificationState.withLock { if $0.client == connecting { ($0.client, $0.ready) = (nil, nil) } }
            throw error
        }
    }

    private func makeNotificationClient(_ configuration: MosquittoConfiguration) -> Connecting {
        let (logger, errors) = (logger, errors)
        let id = configuration.clientID ?? ""
        return Task {
            let client = MosquittoClient(configuration: configuration, logger: logger)
            do {
                try await client.connect()
            } catch MosquittoError.connectionRefused(_, let reason) {
                errors.record(
                    "the broker refused the mqtt backend's own client '\(id)' (\(reason)); its notifications go over"
                        + " hubd's connection, each after the journal's fsync")
                return nil
            }
            logger.info("the mqtt backend connected", metadata: ["client_id": "\(id)"])
            return client
        }
    }

    private func notificationConfiguration(_ broker: BrokerSettings) -> MosquittoConfiguration {
        var mqtt = mosquittoConfiguration(broker)
        mqtt.clientID = (mqtt.clientID ?? broker.clientID) + "-notify"
        mqtt.cleanSession = true
        mqtt.will = nil
        mqtt.holdsAcknowledgements = false
        return mqtt
    }

    /// Closes the notification client once the hub stops; none is made after that.
    func closeNotificationClient() async {
        let client = notificationState.withLock { current in
            defer { (current.client, current.ready, current.stopped) = (nil, nil, true) }
            return current.client
        }
        if let client, let made = try? await client.value { await made.disconnect() }
    }
}
