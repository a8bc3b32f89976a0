import HubCore
import ServiceLifecycle

extension Journal {
    /// What the journal did since start, as the status file and `/metrics` show it.
    public var statistics: AgentStatus.JournalCounters {
        state.withLock { state in
            var statistics = state.statistics
            // Consumer names are unique: acknowledgements are kept by name.
            statistics.unacknowledged = Dictionary(
                uniqueKeysWithValues: state.consumers.map {
                    ($0.name, max(0, state.durable - (state.acknowledged[$0.name] ?? 0)))
                })
            return statistics
        }
    }

    /// What the journal held at start.
    public struct Replay: Sendable {
        /// Every record in the file, oldest first.
        public var records: [JournalRecord] = []
        /// Up to where each consumer had acknowledged them.
        public var acknowledged: [String: Int] = [:]
        public var unreadable = 0
        /// The packet ids of the messages applied lately.
        public var deliveries = RecentDeliveries()
    }
}

/// The journal is the first service to start and the last to stop: it closes (compacting what every consumer has
/// acknowledged) once the registry's last write is done.
extension Journal: Service {
    public func run() async {
        try? await gracefulShutdown()
        await close()
    }
}
