import Foundation
import HubCore
import HubSupport
import Logging
import PostgresNIO

/// The cluster's tables: which agents are alive (each says so every renewal), and which agent holds each duty that
/// must be done once (a lease that lasts `lease` unless renewed, taken over by another agent only after it expired,
/// with the server's clock).
public final class ClusterDatabase: Sendable {
    public let settings: ClusterSettings
    private let session: DatabaseSession
    /// This process: a second hubd under the same agent name is told apart by it.
    private let instance = UUID().uuidString
    /// Whether the others were told this agent is here.
    private let announced = Locked(false)

    public init(server: DatabaseSettings, settings: ClusterSettings, logger: Logger) {
        self.settings = settings
        session = DatabaseSession(
            server: server, applicationName: "hubd \(settings.agent) cluster", limit: settings.renewal,
            keepsConnection: true, logger: logger)
    }

    /// An agent as the database last heard of it.
    public struct Agent: Sendable, Hashable {
        public var name: String
        public var version: String
        public var started: Timestamp
        public var lastSeen: Timestamp
        /// Whether it renewed within the lease.
        public var alive: Bool
        public var duties: [String]
    }

    /// The channel agents announce a change of the cluster's membership or leases on (an agent joined, is leaving,
    /// gave up leases): the others look again at once rather than at their next renewal.
    static let channel = "sensorhub_cluster"

    /// A signal after each announcement on the cluster's channel (any group's), and each time the listening
    /// connection is made.
    public func changes(logger: Logger) -> AsyncStream<Void> {
        PostgresRegistry.notifications(
            on: Self.channel, server: session.server, as: "hubd \(settings.agent) cluster listener", logger: logger)
    }

    /// Says this agent is alive, and asks for `wanted` (renewing those it holds, taking those whose lease expired);
    /// returns each wanted duty's epoch, `nil` for one another agent holds. One transaction, which also records the
    /// duties the agent holds after it. An agent's first renewal is announced to the others.
    /// - Parameter leaving: the agent is stopping: it keeps its leases until it gives them up, but the others no
    ///   longer count it among the live agents that share the partitions (announced).
    public func renew(wanted: [String], started: Timestamp, leaving: Bool = false) async throws -> [String: Int64?] {
        do {
            return try await renewNow(wanted: wanted.sorted(), started: started, leaving: leaving)
        } catch let error as PostgresTransactionError {
            // The name in use is the agent's problem, not the transaction's.
            if let inUse = error.closureError as? AgentNameInUse { throw inUse }
            throw error
        }
    }

    private func renewNow(wanted: [String], started: Timestamp, leaving: Bool) async throws -> [String: Int64?] {
        let (settings, instance) = (settings, instance)
        let seconds = Double(settings.lease.components.seconds)
        // Leaving: alive no more, as of now.
        let lasts = leaving ? 0 : seconds
        let announce = leaving || !announced.withLock { $0 }
        let granted = try await session.run { connection in
            try await connection.withTransaction(logger: connection.logger) { connection in
                let registered = try await connection.query(
                    """
                    INSERT INTO sensorhub_agents AS a (cluster, agent, instance, version, started, last_seen, expires)
                    VALUES (\(settings.group), \(settings.agent), \(instance), \(SensorHubVersion.current),
                        'epoch'::timestamptz + \(started.millisecondsSince1970)::bigint * interval '1 millisecond',
                        now(), now() + \(lasts) * interval '1 second')
                    ON CONFLICT (cluster, agent) DO UPDATE SET instance = EXCLUDED.instance,
                        version = EXCLUDED.version, started = EXCLUDED.started, last_seen = now(),
                        expires = EXCLUDED.expires
                    WHERE a.instance = EXCLUDED.instance OR a.expires < now()
                    RETURNING agent
                    """, logger: connection.logger
                ).collect()
                guard !registered.isEmpty else { throw AgentNameInUse(agent: settings.agent, group: settings.group) }
                var granted: [String: Int64?] = Dictionary(uniqueKeysWithValues: wanted.map { ($0, nil) })
                let rows = try await connection.query(
                    """
                    INSERT INTO sensorhub_leases AS l (cluster, duty, holder, epoch, expires)
                    SELECT \(settings.group), duty, \(settings.agent), 1, now() + \(seconds) * interval '1 second'
                    FROM unnest(\(wanted)::text[]) AS duty ORDER BY duty
                    ON CONFLICT (cluster, duty) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires,
                        epoch = l.epoch + CASE WHEN l.holder = EXCLUDED.holder THEN 0 ELSE 1 END
                    WHERE l.holder = EXCLUDED.holder OR l.expires < now()
                    RETURNING duty, epoch
                    """, logger: connection.logger)
                for try await (duty, epoch) in rows.decode((String, Int64).self) { granted[duty] = epoch }
                try await connection.query(
                    """
                    UPDATE sensorhub_agents SET duties = coalesce(
                        (SELECT array_agg(duty ORDER BY duty) FROM sensorhub_leases
                         WHERE cluster = \(settings.group) AND holder = \(settings.agent) AND expires > now()), '{}')
                    WHERE cluster = \(settings.group) AND agent = \(settings.agent)
                    """, logger: connection.logger)
                if announce { try await Self.announce(settings.group, connection) }
                return granted
            }
        }
        if announce { announced.withLock { $0 = true } }
        return granted
    }

    /// Tells the agents listening that the group's membership or leases changed (delivered at commit).
    private static func announce(_ group: String, _ connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(channel), \(group))", logger: connection.logger)
    }

    /// Gives up every lease this agent holds and says it stopped: the others take its duties at their next renewal.
    public func leave() async throws {
        let (settings, instance) = (settings, instance)
        try await session.run { connection in
            try await connection.query(
                """
                UPDATE sensorhub_leases SET expires = now() - interval '1 millisecond'
                WHERE cluster = \(settings.group) AND duty IN (
                    SELECT duty FROM sensorhub_leases
                    WHERE cluster = \(settings.group) AND holder = \(settings.agent) AND EXISTS (
                        SELECT 1 FROM sensorhub_agents WHERE cluster = \(settings.group) AND agent = \(settings.agent)
                            AND instance = \(instance))
                    ORDER BY duty FOR UPDATE)
                """, logger: connection.logger)
            try await connection.query(
                """
                UPDATE sensorhub_agents SET expires = now(), duties = '{}'
                WHERE cluster = \(settings.group) AND agent = \(settings.agent) AND instance = \(instance)
                """, logger: connection.logger)
            try await Self.announce(settings.group, connection)
        }
        await session.close()
    }

    /// Gives up `duties` if this agent holds them: another agent may take them at once.
    ///
    /// Lease rows are locked in the order of their duty, here and in a renewal, so that two agents' statements
    /// can't wait on each other; PostgreSQL's deadlock detector ended one such release in 60 chaos runs
    /// (2026-11-28), so a release the server rolled back for a conflict is tried again, three times at most.
    public func release(_ duties: [String]) async throws {
        guard !duties.isEmpty else { return }
        let settings = settings
        var attempt = 0
        while true {
            do {
                try await session.run { connection in
                    try await connection.query(
                        """
                        UPDATE sensorhub_leases SET expires = now() - interval '1 millisecond'
                        WHERE cluster = \(settings.group) AND duty IN (
                            SELECT duty FROM sensorhub_leases
                            WHERE cluster = \(settings.group) AND holder = \(settings.agent)
                                AND duty = ANY(\(duties)::text[])
                            ORDER BY duty FOR UPDATE)
                        """, logger: connection.logger)
                    try await Self.announce(settings.group, connection)
                }
                return
            } catch  where attempt < 2 && PostgresRemote.isConflict(error) {
                attempt += 1
            }
        }
    }

    /// Every agent of the group the database knows, by name.
    public func agents() async throws -> [Agent] {
        let group = settings.group
        return try await session.run { connection in
            let rows = try await connection.query(
                """
                SELECT agent, version, (extract(epoch FROM started) * 1000)::bigint,
                    (extract(epoch FROM last_seen) * 1000)::bigint, expires > now(), duties
                FROM sensorhub_agents WHERE cluster = \(group) ORDER BY agent
                """, logger: connection.logger)
            var agents: [Agent] = []
            for try await (name, version, started, seen, alive, duties) in rows.decode(
                (String, String, Int64, Int64, Bool, [String]).self)
            {
                agents.append(
                    Agent(
                        name: name, version: version, started: Timestamp(millisecondsSince1970: started),
                        lastSeen: Timestamp(millisecondsSince1970: seen), alive: alive, duties: duties))
            }
            return agents
        }
    }

    public func close() async { await session.close() }
}

/// Another live hubd process renews under this agent's name: two agents must not share one (nor its MQTT session).
public struct AgentNameInUse: Error, CustomStringConvertible {
    public let agent: String
    public let group: String
    public var description: String {
        "another hubd runs as agent '\(agent)' of group '\(group)': give each agent its own cluster.agent (the"
            + " host name by default); this one holds no duty until the other stops"
    }
}
