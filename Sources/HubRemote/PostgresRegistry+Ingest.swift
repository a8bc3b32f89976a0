import HubCore
import HubSupport
import Logging
import PostgresNIO

extension PostgresRegistry {
    /// The QoS 1 messages of one MQTT session that a step applies, by the broker's packet id and a digest of their
    /// topic and payload. The broker sends a message again, with the same packet id, when the agent that had it
    /// died before acknowledging it, perhaps after committing it: such a message is known, and skipped.
    public struct Deliveries: Sendable {
        public var session: String
        public var messages: [(packet: Int, digest: String)]
        /// The broker had no session for this client when it connected (CONNACK's session present flag clear): the
        /// ids recorded for an earlier one are forgotten first, since the broker hands them out again from 1.
        public var sessionIsNew: Bool

        public init(session: String, messages: [(packet: Int, digest: String)], sessionIsNew: Bool = false) {
            self.session = session
            self.messages = messages
            self.sessionIsNew = sessionIsNew
        }
    }

    /// The lease a step's messages came under (a cluster partition's, `ClusterPartitions`): the step commits only
    /// while this agent holds it at this epoch, checked after the step has locked its sensors' rows. So a step of an
    /// agent that lost the partition (paused past its lease, cut off from the database) commits nothing once another
    /// agent has taken it, and one that passed the check commits before the new holder's first step on those
    /// sensors, which waits for the rows.
    public struct Fence: Sendable, Hashable {
        public var cluster: String
        public var duty: String
        public var agent: String
        public var epoch: Int64

        public init(cluster: String, duty: String, agent: String, epoch: Int64) {
            self.cluster = cluster
            self.duty = duty
            self.agent = agent
            self.epoch = epoch
        }

        /// This agent's lease on `duty` in its cluster, at `epoch`.
        public init(_ settings: ClusterSettings, duty: String, epoch: Int64) {
            self.init(cluster: settings.group, duty: duty, agent: settings.agent, epoch: epoch)
        }
    }

    /// One step of a cluster's shared ingest (docs/cluster.md): in one transaction, locks the rows of the sensors on
    /// `topics` (so one agent at a time works on a sensor, whichever took its messages), hands `apply` the registry
    /// with those sensors as committed, writes the rows it changed and the events it returns (`events`, tagged
    /// `hub`), and commits. An event whose id the table has already (a message applied twice) is not written again;
    /// the events returned are the new ones. Changes of the sensor set wait for it, and it for them; agents' steps on
    /// other sensors run side by side. The statuses' revision is not moved: agents read statuses from their tracker.
    /// `notifications` makes the outbox's rows for the new events, written in the same transaction, with the
    /// cluster's rate limits checked and recorded there too (`RateLimits`); `alerting` picks the new events queued for
    /// the cluster's alert book (`PostgresAlertBook`), in the same transaction too. `apply` is told
    /// the packet ids of `deliveries` committed before (to skip), and `deliveries` are recorded with the step.
    /// Returns nil, having applied and committed nothing, when this agent no longer holds `fence`.
    public func ingest(
        onTopics topics: [String], hub: String, deliveries: Deliveries? = nil, fence: Fence? = nil,
        notifications: (@Sendable ([SensorEvent], RateLimits) async throws -> [PostgresOutbox.Row])? = nil,
        alerting: (@Sendable ([SensorEvent]) -> [SensorEvent])? = nil,
        _ apply: @escaping @Sendable (inout DefaultsDocument, _ committedBefore: Set<Int>) -> [SensorEvent]
    ) async throws(StoreError) -> [SensorEvent]? {
        let (logger, location) = (logger, location)
        // A step holds up its messages' acknowledgements: one that hangs (seen on a connection to a database that
        // had just crashed and come back, for the registry's whole 30 s limit) is given up after 5 s and tried
        // again on a new connection. Given up, it must not go on behind the caller's back (waiting is all `bounded`
        // stops): it applies nothing and commits nothing from then on, short of a COMMIT already sent.
        let abandoned = Locked(false)
        let check = { @Sendable in if abandoned.withLock({ $0 }) { throw StepAbandoned() } }
        let outcome: Result<[SensorEvent]?, StoreError>
        do {
            outcome = try await step(
                topics, hub: hub, deliveries: deliveries, fence: fence, notifications: notifications,
                alerting: alerting, check: check, apply)
        } catch {
            abandoned.withLock { $0 = true }
            throw error
        }
        return try outcome.get()
    }

    /// `ingest`'s transaction; `check` throws (rolling it back) once the caller has given up on it.
    private func step(
        _ topics: [String], hub: String, deliveries: Deliveries?, fence: Fence?,
        notifications: (@Sendable ([SensorEvent], RateLimits) async throws -> [PostgresOutbox.Row])?,
        alerting: (@Sendable ([SensorEvent]) -> [SensorEvent])?, check: @escaping @Sendable () throws -> Void,
        _ apply: @escaping @Sendable (inout DefaultsDocument, _ committedBefore: Set<Int>) -> [SensorEvent]
    ) async throws(StoreError) -> Result<[SensorEvent]?, StoreError> {
        let (logger, location) = (logger, location)
        return try await withConnection(within: .seconds(5)) { connection -> Result<[SensorEvent]?, StoreError> in
            try await connection.withTransaction(logger: logger) { connection -> Result<[SensorEvent]?, StoreError> in
                guard let (_, header) = try await Self.header(connection, locking: .share, logger: logger) else {
                    return .success([])
                }
                let sensors = try await Self.rows(onTopics: topics, connection, logger: logger)
                // After the rows are locked: a holder that took the lease since committed it first.
                if let fence, try await !Self.holds(fence, connection, logger: logger) { return .success(nil) }
                var document: DefaultsDocument
                do throws(JSONSyntaxError) {
                    document = try DefaultsDocument.decode(header: header, sensors: sensors)
                } catch {
                    return .failure(.invalidDocument(path: location, error))
                }
                let known = try await Self.committedBefore(deliveries, connection, logger: logger)
                try check()
                let events = apply(&document, known)
                try await Self.record(deliveries, connection, logger: logger)
                if document.revision != 0 {
                    try await Self.write(
                        document.changedSensorRows(), removing: [], header: nil, to: connection, logger: logger)
                }
                guard !events.isEmpty else {
                    try check()
                    return .success([])
                }
                try await connection.query(
                    "INSERT INTO hubs (name) VALUES (\(hub)) ON CONFLICT (name) DO NOTHING", logger: logger)
                var fresh = Set<String>()
                for chunk in events.chunked(by: 1_000) {
                    let rows = try await connection.query(
                        PostgresRemote.eventsInsert(chunk, hub: hub, returningIDs: true), logger: logger)
                    for try await id in rows.decode(String.self) { fresh.insert(id) }
                }
                let new = events.filter { fresh.contains($0.id) }
                if let notifications, !new.isEmpty {
                    let limits = RateLimits(connection: connection, hub: hub, logger: logger)
                    try await PostgresOutbox.insert(
                        try await notifications(new, limits), hub: hub, on: connection, logger: logger)
                }
                if let alerting, !new.isEmpty {
                    try await PostgresAlertBook.queue(alerting(new), hub: hub, on: connection, logger: logger)
                }
                try check()
                return .success(new)
            }
        }
    }

    /// A step its caller gave up on (it took too long): rolled back.
    struct StepAbandoned: Error {}

    /// Whether the agent still holds `fence`'s lease at its epoch.
    static func holds(_ fence: Fence, _ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            SELECT 1 FROM sensorhub_leases
            WHERE cluster = \(fence.cluster) AND duty = \(fence.duty) AND holder = \(fence.agent)
                AND epoch = \(fence.epoch)
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The packet ids of `deliveries` whose message (the same digest) the session committed before.
    static func committedBefore(_ deliveries: Deliveries?, _ connection: PostgresConnection, logger: Logger)
        async throws -> Set<Int>
    {
        guard let deliveries, !deliveries.sessionIsNew, !deliveries.messages.isEmpty else { return [] }
        let wanted = Dictionary(
            deliveries.messages.map { ($0.packet, $0.digest) }, uniquingKeysWith: { _, last in last })
        let rows = try await connection.query(
            """
            SELECT packet, digest FROM sensorhub_deliveries
            WHERE session = \(deliveries.session) AND packet = ANY(\(Array(wanted.keys))::integer[])
            """, logger: logger)
        var known = Set<Int>()
        for try await (packet, digest) in rows.decode((Int, String).self) where wanted[packet] == digest {
            known.insert(packet)
        }
        return known
    }

    /// Records `deliveries` (in the order the messages arrived) as committed, and forgets the session's packet ids
    /// more than 4,096 from the batch's newest either way (a batch the broker sends again has older ids than the
    /// batches after it, which may come again too). A message the broker sends again is one it had sent and not had
    /// acknowledged, so it is among the last few hundred the session received (a batch is a part of what the client
    /// read in one pass, and a pass is acknowledged whole, so the unacknowledged may span several batches); the
    /// broker hands out packet ids in turn and reuses one only after 65,535 others, so a reused id is never taken
    /// for a message sent again.
    static func record(_ deliveries: Deliveries?, _ connection: PostgresConnection, logger: Logger) async throws {
        guard let deliveries else { return }
        if deliveries.sessionIsNew {
            try await connection.query(
                "DELETE FROM sensorhub_deliveries WHERE session = \(deliveries.session)", logger: logger)
        }
        guard let newest = deliveries.messages.last?.packet else { return }
        // `RecentDeliveries`' rule, which one hub keeps in its journal.
        let span = RecentDeliveries.span
        try await connection.query(
            """
            DELETE FROM sensorhub_deliveries
            WHERE session = \(deliveries.session)
                AND ((\(newest) - packet) % 65535 + 65535) % 65535 BETWEEN \(span + 1) AND \(65535 - span - 1)
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO sensorhub_deliveries (session, packet, digest)
            SELECT \(deliveries.session), * FROM unnest(\(deliveries.messages.map(\.packet))::integer[],
                \(deliveries.messages.map(\.digest))::text[])
            ON CONFLICT (session, packet) DO UPDATE SET digest = EXCLUDED.digest
            """, logger: logger)
    }
}
