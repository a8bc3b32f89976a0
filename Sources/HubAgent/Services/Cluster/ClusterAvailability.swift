import HubCore
import Logging
import ServiceLifecycle

/// In a cluster: each agent's will says the hub is offline when that agent dies, though the others still run. The
/// holder of the `availability` duty (held while any agent runs) says `online` again every renewal, so the hub's
/// availability means "some agent is alive": `offline` for at most a renewal after an agent dies, or the lease and a
/// renewal when the holder itself died; `offline` for good once the last one is gone.
final class ClusterAvailability: Service, Sendable {
    private let keeper: LeaseKeeper
    private let connection: BrokerConnection
    private let topic: String
    private let logger: Logger

    init(keeper: LeaseKeeper, connection: BrokerConnection, topic: String, logger: Logger) {
        self.keeper = keeper
        self.connection = connection
        self.topic = topic
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: self.keeper.database.settings.renewal)
                guard !Task.isCancelled, self.keeper.holds(.availability) else { continue }
                do {
                    try await self.connection.publish(
                        topic: self.topic, payload: Array("online".utf8), qos: .atLeastOnce, retain: true)
                } catch {
                    self.logger.debug("could not say the hub is online", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
