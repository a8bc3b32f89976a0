import Foundation
import HubCore
import Logging
import NIOSSL
import PostgresNIO

/// One connection to the remote PostgreSQL database: made with `connect`, which brings the schema up to date
/// (PostGIS when the server has it and the settings allow) and records the hub; `send` writes a batch in one
/// transaction, every insert idempotent (`ON CONFLICT`), every value a bound parameter.
public final class PostgresRemote: Sendable {
    public let settings: RemoteSettings
    /// Whether readings get a `geography` position (schema version 2 is in the database).
    public let usesPostGIS: Bool
    /// The schema versions the database has.
    public let versions: Set<Int>
    let connection: PostgresConnection
    let logger: Logger

    private init(
        settings: RemoteSettings, connection: PostgresConnection, versions: Set<Int>, logger: Logger
    ) {
        self.settings = settings
        self.connection = connection
        self.versions = versions
        self.usesPostGIS = versions.contains(2)
        self.logger = logger
    }

    /// Connects, migrates the schema and records this hub in `hubs`.
    public static func connect(_ settings: RemoteSettings, logger: Logger) async throws -> PostgresRemote {
        let connection = try await PostgresConnection.connect(
            to: settings.server, applicationName: "hubd \(settings.hub)", logger: logger)
        do {
            let versions = try await migrate(connection, postgis: settings.postgis, logger: logger)
            try await connection.query(
                """
                INSERT INTO hubs (name) VALUES (\(settings.hub))
                ON CONFLICT (name) DO UPDATE SET last_seen = now()
                """, logger: logger)
            return PostgresRemote(settings: settings, connection: connection, versions: versions, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Every schema version a database with PostGIS ends with; one without lacks only the PostGIS ones.
    public static var schemaVersions: (all: Set<Int>, withoutPostGIS: Set<Int>) {
        (
            Set(RemoteSchema.migrations.map(\.version)),
            Set(RemoteSchema.migrations.filter { !$0.needsPostGIS }.map(\.version))
        )
    }

    /// `migrate`, unless every version that needs no PostGIS is there already: then nothing is created, nothing is
    /// locked, and a role that may read and write the tables but not create any works too (hubctl, each call).
    static func migrateIfBehind(_ connection: PostgresConnection, logger: Logger) async throws -> Set<Int> {
        var present = Set<Int>()
        do {
            let rows = try await connection.query("SELECT version FROM sensorhub_migrations", logger: logger)
            for try await version in rows.decode(Int.self) { present.insert(version) }
        } catch {
            present = []
        }
        if present.isSuperset(of: schemaVersions.withoutPostGIS) { return present }
        return try await migrate(connection, postgis: false, logger: logger)
    }

    /// Applies the migrations the database lacks; returns the versions it has then.
    static func migrate(_ connection: PostgresConnection, postgis wanted: Bool, logger: Logger) async throws
        -> Set<Int>
    {
        var found = false
        var installed = false
        if wanted {
            let available = try await connection.query(
                "SELECT installed_version FROM pg_available_extensions WHERE name = 'postgis'", logger: logger)
            for try await (version) in available.decode(String?.self) {
                found = true
                installed = version != nil
            }
            if found && !installed {
                do {
                    try await connection.query("CREATE EXTENSION IF NOT EXISTS postgis", logger: logger)
                    installed = true
                } catch {
                    // Only a superuser (or the database's owner, for trusted extensions) may: plain columns then.
                    logger.warning(
                        "PostGIS is available on the remote but could not be installed; positions go in plain columns",
                        metadata: ["error": "\(String(reflecting: error))"])
                }
            }
        }
        let postgis = installed
        return try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(RemoteSchema.lockKey))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: RemoteSchema.migrationsTable), logger: logger)
            var versions = Set<Int>()
            for try await version in try await connection.query(
                "SELECT version FROM sensorhub_migrations", logger: logger
            ).decode(Int.self) {
                versions.insert(version)
            }
            for migration in RemoteSchema.migrations where !versions.contains(migration.version) {
                guard !migration.needsPostGIS || postgis else { continue }
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO sensorhub_migrations (version, description)
                    VALUES (\(migration.version), \(migration.description))
                    """, logger: logger)
                logger.info(
                    "migrated the database schema",
                    metadata: ["version": "\(migration.version)", "what": "\(migration.description)"])
                versions.insert(migration.version)
            }
            return versions
        }
    }

    /// Whether the connection is gone (the server closed it, or `close` did): connect again.
    public var isClosed: Bool { connection.isClosed }

    /// Writes `entries` in one transaction; what the database has already is left as it is. Gives up after
    /// `limit` (see `bounded`).
    public func send(_ entries: [RemoteEntry], limit: Duration = .seconds(60)) async throws {
        guard !connection.isClosed else { throw RemoteConnectionClosed() }
        try await bounded(limit) { try await self.sendNow(entries) }
    }

    private func sendNow(_ entries: [RemoteEntry]) async throws {
        let readings = entries.compactMap(\.reading)
        let events = entries.compactMap(\.event)
        let hub = settings.hub
        let logger = self.logger
        try await connection.withTransaction(logger: logger) { connection in
            for chunk in readings.chunked(by: 1_000) {
                try await connection.query(Self.readingsInsert(chunk, hub: hub), logger: logger)
            }
            for chunk in events.chunked(by: 1_000) {
                try await connection.query(Self.eventsInsert(chunk, hub: hub), logger: logger)
            }
            for event in events where event.kind == .session {
                guard let session = event.sessionID else { continue }
                let sensorID = event.sensorID ?? event.sensor
                let time = event.time.millisecondsSince1970
                if event.isSessionStart {
                    try await connection.query(
                        """
                        INSERT INTO sessions (hub, id, sensor_id, sensor, started)
                        VALUES (\(hub), \(session), \(sensorID), \(event.sensor),
                                'epoch'::timestamptz + \(time) * interval '1 millisecond')
                        ON CONFLICT (hub, id) DO UPDATE SET started = COALESCE(sessions.started, EXCLUDED.started)
                        """, logger: logger)
                } else {
                    try await connection.query(
                        """
                        INSERT INTO sessions (hub, id, sensor_id, sensor, ended)
                        VALUES (\(hub), \(session), \(sensorID), \(event.sensor),
                                'epoch'::timestamptz + \(time) * interval '1 millisecond')
                        ON CONFLICT (hub, id) DO UPDATE SET ended = EXCLUDED.ended
                        """, logger: logger)
                }
            }
        }
    }

    /// Closes the connection.
    public func close() async {
        try? await connection.close()
    }

    /// One multi-row insert; times go as whole milliseconds and become `timestamptz` exactly on the server.
    static func readingsInsert(_ readings: some Collection<RemoteEntry.Reading>, hub: String) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: readings.count * 13)
        var rows: [String] = []
        rows.reserveCapacity(readings.count)
        for reading in readings {
            let base = bindings.count
            bindings.append(hub)
            bindings.append(reading.sensorID)
            bindings.append(reading.sensor)
            bindings.append(reading.time)
            bindings.append(reading.session)
            bindings.append(reading.pm25)
            bindings.append(reading.pm10)
            bindings.append(reading.value)
            bindings.append(reading.unit)
            bindings.append(reading.lat)
            bindings.append(reading.lon)
            bindings.append(reading.alt)
            bindings.append(reading.accuracy)
            let p = (1...13).map { "$\(base + $0)" }
            rows.append(
                "(\(p[0]), \(p[1]), \(p[2]), 'epoch'::timestamptz + \(p[3])::bigint * interval '1 millisecond', "
                    + "\(p[4]), \(p[5]), \(p[6]), \(p[7]), \(p[8]), \(p[9]), \(p[10]), \(p[11]), \(p[12]))")
        }
        let sql =
            "INSERT INTO readings (hub, sensor_id, sensor, time, session, pm25, pm10, value, unit, lat, lon, alt, "
            + "accuracy) VALUES " + rows.joined(separator: ", ") + " ON CONFLICT (hub, sensor_id, time) DO NOTHING"
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    /// - Parameter returningIDs: the statement returns the ids of the events the table did not have yet.
    static func eventsInsert(_ events: some Collection<SensorEvent>, hub: String, returningIDs: Bool = false)
        -> PostgresQuery
    {
        var bindings = PostgresBindings(capacity: events.count * 9)
        var rows: [String] = []
        for event in events {
            let base = bindings.count
            bindings.append(hub)
            bindings.append(event.id)
            bindings.append(event.kind.rawValue)
            bindings.append(event.sensor)
            bindings.append(event.topic)
            bindings.append(event.oldStatus)
            bindings.append(event.newStatus)
            bindings.append(event.value)
            bindings.append(event.time.millisecondsSince1970)
            let p = (1...9).map { "$\(base + $0)" }
            rows.append(
                "(\(p[0]), \(p[1]), \(p[2]), \(p[3]), \(p[4]), \(p[5]), \(p[6]), \(p[7]), "
                    + "'epoch'::timestamptz + \(p[8])::bigint * interval '1 millisecond')")
        }
        let sql =
            "INSERT INTO events (hub, id, kind, sensor, topic, old, new, value, time) VALUES "
            + rows.joined(separator: ", ") + " ON CONFLICT (hub, id) DO NOTHING" + (returningIDs ? " RETURNING id" : "")
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

extension PostgresRemote {
    /// Whether `error` is the server refusing what was sent — a data exception (SQLSTATE class 22: a value it can't
    /// take) or an integrity constraint (class 23) — rather than a connection that failed or a database that is not
    /// as it should be (a table dropped, a privilege revoked: those are waited out like an outage, never a reason to
    /// set entries aside).
    public static func isRefusal(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransactionError {
            return error.closureError.map(isRefusal) ?? false
        }
        guard let error = error as? PSQLError, error.code == .server,
            let state = error.serverInfo?[.sqlState]
        else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23")
    }
}

extension PostgresRemote {
    /// Whether `error` is the server rolling a transaction back for a conflict with another (SQLSTATE class 40: a
    /// deadlock, a serialization failure): trying it again may work.
    public static func isConflict(_ error: any Error) -> Bool {
        if let error = error as? PostgresTransactionError {
            return error.closureError.map(isConflict) ?? false
        }
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState]
        else { return false }
        return state.hasPrefix("40")
    }
}

/// The server closed the connection (it shut down, or dropped us).
public struct RemoteConnectionClosed: Error, CustomStringConvertible {
    public var description: String { "the remote database closed the connection" }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(by size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
