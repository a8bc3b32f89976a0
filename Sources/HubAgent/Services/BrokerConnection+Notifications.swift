import HubCore
import Logging
import Mosquitto

/// The `mqtt` backend publishes over a client of its own, made at its first notification: on the hub's client a
/// notification waited behind the acknowledgements the network thread holds until the journal's `fsync` (it writes
/// nothing while it waits, and the PUBACKs it holds are queued ahead of anything published meanwhile), so every
/// notification to MQTT paid for an `fsync` that other backends no longer wait for. Same broker and credentials,
/// the hub's client id with `-notify`, a clean session and no will; its statuses are the hub's client's to say.
extension BrokerConnection {
    /// Publishes a notification; throws when the hub is not connected or the notification client can't connect (the
    /// backend's queue tries again).
    func publishNotification(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) async throws {
        // Not before the hub's own client has connected (the settings work) or once it has stopped.
        guard let broker = state.withLock({ $0.connected ? $0.broker : nil }) else {
            throw MosquittoError.notConnected(operation: "publish")
        }
        let client = try await notificationClient(broker)
        try await client.publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    /// The notification client, connected once for all the publishes that wait for it; made again after it stopped
    /// for good or could not connect.
    private func notificationClient(_ broker: BrokerSettings) async throws -> MosquittoClient {
        let connecting = notificationClient.withLock { current -> Task<MosquittoClient, any Error> in
            if let current { return current }
            let configuration = notificationConfiguration(broker)
            let logger = logger
            let made = Task {
                let client = MosquittoClient(configuration: configuration, logger: logger)
                try await client.connect()
                logger.info("the mqtt backend connected", metadata: ["client_id": "\(configuration.clientID ?? "")"])
                return client
            }
            current = made
            return made
        }
        do {
            let client = try await connecting.value
            if !client.isClosed { return client }
            throw MosquittoError.notConnected(operation: "publish")
        } catch {
            notificationClient.withLock { if $0 == connecting { $0 = nil } }
            throw error
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

    /// Closes the notification client (new broker settings, or the hub stopping); the next publish makes another.
    func dropNotificationClient() {
        guard
            let client = notificationClient.withLock({ current in
                defer { current = nil }; return current
            })
        else {
            return
        }
        Task { try? await client.value.disconnect() }
    }
}
