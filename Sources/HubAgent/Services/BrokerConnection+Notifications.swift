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
        /// Set when the hub stops: no client is made after that.
        var stopped = false
    }

    /// Publishes a notification; throws when it can't be published now (the backend's queue tries again).
    func publishNotification(
        topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool, timeout: Duration
    ) async throws {
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
        do {
            try await client.publish(topic: topic, payload: payload, qos: qos, retain: retain, timeout: timeout)
        } catch {
            if error.isPublishRefusedForGood { throw PublishRefused("\(error)") }
            throw error
        }
    }

    /// The notification client for `broker`, connected once for all the publishes that wait for it; made again after
    /// it stopped for good or could not connect, and for new settings. `nil` when the broker refused it.
    private func notificationClient(_ broker: BrokerSettings) async throws -> MosquittoClient? {
        let (connecting, replaced) = try notificationState.withLock { current throws in
            if current.stopped { throw MosquittoError.closed(operation: "publish") }
            if current.broker == broker, let client = current.client { return (client, Connecting?.none) }
            let replaced = current.client
            let made = makeNotificationClient(notificationConfiguration(broker))
            (current.broker, current.client) = (broker, made)
            return (made, replaced)
        }
        if let replaced { Task { try? await replaced.value?.disconnect() } }
        do {
            let client = try await connecting.value
            if client?.isClosed != true { return client }
            throw MosquittoError.notConnected(operation: "publish")
        } catch {
            notificationState.withLock { if $0.client == connecting { $0.client = nil } }
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
            defer { (current.client, current.stopped) = (nil, true) }
            return current.client
        }
        if let client, let made = try? await client.value { await made.disconnect() }
    }
}
