import HubCore
import Logging
import PostgresNIO

extension PostgresRegistry {
    /// One step of a cluster's shared ingest (docs/cluster.md): in one transaction, locks the rows of the sensors on
    /// `topics` (so one agent at a time works on a sensor, whichever took its messages), hands `apply` the registry
    /// with those sensors as committed, writes the rows it changed and the events it returns (`events`, tagged
    /// `hub`), and commits. An event whose id the table has already (a message applied twice) is not written again;
    /// the events returned are the new ones. Changes of the sensor set wait for it, and it for them; agents' steps on
    /// other sensors run side by side. The statuses' revision is not moved: agents read statuses from their tracker.
    /// `notifications` makes the outbox's rows for the new events, written in the same transaction.
    public func ingest(
        onTopics topics: [String], hub: String,
        notifications: (@Sendable ([SensorEvent]) async -> [PostgresOutbox.Row])? = nil,
        _ apply: @escaping @Sendable (inout DefaultsDocument) -> [SensorEvent]
    ) async throws(StoreError) -> [SensorEvent] {
        let (logger, location) = (logger, location)
        let outcome = try await withConnection { connection -> Result<[SensorEvent], StoreError> in
            try await connection.withTransaction(logger: logger) { connection -> Result<[SensorEvent], StoreError> in
                guard let (_, header) = try await Self.header(connection, locking: .share, logger: logger) else {
                    return .success([])
                }
                let sensors = try await Self.rows(onTopics: topics, connection, logger: logger)
                var document: DefaultsDocument
                do throws(JSONSyntaxError) {
                    document = try DefaultsDocument.decode(header: header, sensors: sensors)
                } catch {
                    return .failure(.invalidDocument(path: location, error))
                }
                let events = apply(&document)
                if document.revision != 0 {
                    try await Self.write(
                        document.changedSensorRows(), removing: [], header: nil, to: connection, logger: logger)
                }
                guard !events.isEmpty else { return .success([]) }
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
                    try await PostgresOutbox.insert(
                        await notifications(new), hub: hub, on: connection, logger: logger)
                }
                return .success(new)
            }
        }
        return try outcome.get()
    }
}
