import HubCore
import Logging
import PostgresNIO

/// The registry's statements, each on a connection the caller holds (in a transaction where it says so).
extension PostgresRegistry {
    /// The two revisions of the registry's row.
    struct Revisions: Sendable, Equatable {
        var sensors: Int64
        var statuses: Int64

        var version: RegistryVersion { RegistryVersion(sensors: sensors, statuses: statuses, byteCount: 0) }
    }

    /// The revisions now; `nil` when there is no registry yet.
    static func revisions(_ connection: PostgresConnection, logger: Logger) async throws -> Revisions? {
        let rows = try await connection.query(
            "SELECT revision, statuses FROM sensorhub_registry WHERE id = 1", logger: logger)
        for try await (sensors, statuses) in rows.decode((Int64, Int64).self) {
            return Revisions(sensors: sensors, statuses: statuses)
        }
        return nil
    }

    /// How a read of the registry's row locks it until the transaction ends.
    enum RowLock: String {
        case none = ""
        /// Against changes of the sensor set (which lock it for update), not against other holders of this.
        case share = " FOR SHARE"
        case update = " FOR UPDATE"
    }

    /// The revisions and the header, the row locked as asked; `nil` when there is no registry yet.
    static func header(_ connection: PostgresConnection, locking: RowLock, logger: Logger) async throws -> (
        Revisions, [UInt8]
    )? {
        let sql = "SELECT revision, statuses, header FROM sensorhub_registry WHERE id = 1" + locking.rawValue
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        for try await (sensors, statuses, header) in rows.decode((Int64, Int64, String).self) {
            return (Revisions(sensors: sensors, statuses: statuses), Array(header.utf8))
        }
        return nil
    }

    /// The header row, locked, made first if there is none (an empty registry at revision 0).
    static func lockedHeader(_ connection: PostgresConnection, logger: Logger) async throws -> (Revisions, [UInt8]) {
        if let found = try await header(connection, locking: .update, logger: logger) { return found }
        let empty = String(decoding: DefaultsDocument().headerJSON(), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO sensorhub_registry (id, revision, statuses, header) VALUES (1, 0, 0, \(empty))
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
        guard let made = try await header(connection, locking: .update, logger: logger) else {
            throw PostgresRegistryMissingRow()
        }
        return made
    }

    /// Every sensor's JSON object, in the order they were added.
    static func rows(_ connection: PostgresConnection, logger: Logger) async throws -> [[UInt8]] {
        let rows = try await connection.query(
            "SELECT document FROM sensorhub_sensors ORDER BY position", logger: logger)
        var sensors: [[UInt8]] = []
        for try await document in rows.decode(String.self) { sensors.append(Array(document.utf8)) }
        return sensors
    }

    /// The JSON objects of the sensors on `topics`, their rows locked until the transaction ends.
    static func rows(onTopics topics: [String], _ connection: PostgresConnection, logger: Logger) async throws
        -> [[UInt8]]
    {
        let rows = try await connection.query(
            "SELECT document FROM sensorhub_sensors WHERE topic = ANY(\(topics)) ORDER BY position FOR UPDATE",
            logger: logger)
        var sensors: [[UInt8]] = []
        for try await document in rows.decode(String.self) { sensors.append(Array(document.utf8)) }
        return sensors
    }

    /// Deletes `removed`, writes `rows` (new ones after the last), and the header when given.
    static func write(
        _ rows: [DefaultsDocument.SensorRow], removing removed: [String], header: [UInt8]?,
        to connection: PostgresConnection, logger: Logger
    ) async throws {
        if !removed.isEmpty {
            try await connection.query("DELETE FROM sensorhub_sensors WHERE id = ANY(\(removed))", logger: logger)
        }
        if !rows.isEmpty {
            let ids = rows.map(\.id)
            let names = rows.map(\.nameKey)
            let topics = rows.map(\.topic)
            let documents = rows.map { String(decoding: $0.json, as: UTF8.self) }
            // A new sensor goes after every other, in the order of the rows; one that exists keeps its place.
            try await connection.query(
                """
                INSERT INTO sensorhub_sensors (id, position, name_key, topic, document)
                SELECT r.id, (SELECT coalesce(max(position), 0) FROM sensorhub_sensors) + r.n, r.name_key, r.topic,
                    r.document
                FROM unnest(\(ids)::text[], \(names)::text[], \(topics)::text[], \(documents)::text[])
                    WITH ORDINALITY AS r(id, name_key, topic, document, n)
                ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, topic = EXCLUDED.topic,
                    document = EXCLUDED.document
                """, logger: logger)
        }
        if let header {
            let text = String(decoding: header, as: UTF8.self)
            try await connection.query("UPDATE sensorhub_registry SET header = \(text) WHERE id = 1", logger: logger)
        }
    }

    /// Bumps the statuses' revision, and the sensors' too when `sensors`; returns both.
    static func bump(_ connection: PostgresConnection, sensors: Bool, logger: Logger) async throws -> Revisions {
        let rows = try await connection.query(
            """
            UPDATE sensorhub_registry SET statuses = statuses + 1,
                revision = revision + CASE WHEN \(sensors) THEN 1 ELSE 0 END
            WHERE id = 1 RETURNING revision, statuses
            """, logger: logger)
        for try await (sensors, statuses) in rows.decode((Int64, Int64).self) {
            return Revisions(sensors: sensors, statuses: statuses)
        }
        throw PostgresRegistryMissingRow()
    }
}

extension PostgresRegistry {
    /// Tells every listener the sensors' revision is now `revisions.sensors`; delivered when the transaction commits.
    static func announce(_ revisions: Revisions, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_notify(\(channel), \(String(revisions.sensors)))", logger: logger)
    }
}

/// The registry's row vanished inside a transaction that had it locked: someone deleted it by hand.
struct PostgresRegistryMissingRow: Error, CustomStringConvertible {
    var description: String { "the row of sensorhub_registry is missing (deleted by hand?)" }
}
