import Logging
import Mosquitto
import ServiceLifecycle

/// Keeps the hub's connection to the broker and its retained availability: `online` while it runs, `offline`
/// when it stops (published on shutdown, or by the broker as the last will if the hub dies).
public struct AvailabilityService: Service {
    public let configuration: MosquittoConfiguration
    public let availabilityTopic: String
    public let logger: Logger

    public init(configuration: MosquittoConfiguration, availabilityTopic: String, logger: Logger) {
        var configuration = configuration
        configuration.will = .init(topic: availabilityTopic, payload: "offline", qos: .atLeastOnce, retain: true)
        self.configuration = configuration
        self.availabilityTopic = availabilityTopic
        self.logger = logger
    }

    public func run() async throws {
        guard let client = await connectUntilShutdown() else { return }
        var failure: MosquittoError?
        for await event in client.events.cancelOnGracefulShutdown() {
            switch event {
            case .connected:
                // A broker restarted without persistence has forgotten the retained `online`.
                await announce(client, "online")
            case .closed(let error?):
                failure = error
            default:
                break
            }
        }
        if let failure {
            logger.critical("the MQTT client stopped", metadata: ["error": "\(failure)"])
            throw failure
        }
        await announce(client, "offline")
        await client.disconnect()
    }

    /// Tries to connect until it works or the service is asked to stop; logs every failure.
    private func connectUntilShutdown() async -> MosquittoClient? {
        var attempt = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let client = MosquittoClient(configuration: configuration, logger: logger)
            do {
                try await client.connect()
                return client
            } catch {
                attempt += 1
                let delay = min(
                    configuration.reconnectDelay.upperBound, configuration.reconnectDelay.lowerBound * attempt)
                logger.warning(
                    "cannot connect to the MQTT broker; retrying",
                    metadata: [
                        "broker": "\(configuration.host):\(configuration.port)", "error": "\(error)",
                        "retry_in": "\(delay)",
                    ])
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
                } catch {
                    return nil
                }
            }
        }
        return nil
    }

    private func announce(_ client: MosquittoClient, _ status: String) async {
        do {
            try await client.publish(topic: availabilityTopic, payload: status, qos: .atLeastOnce, retain: true)
            logger.info("published availability", metadata: ["topic": "\(availabilityTopic)", "status": "\(status)"])
        } catch {
            logger.error(
                "could not publish availability", metadata: ["topic": "\(availabilityTopic)", "error": "\(error)"])
        }
    }
}
