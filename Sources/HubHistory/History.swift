import Foundation
import GRDB
import HubCore

/// Particulate readings and status events over time, in SQLite (`history.sqlite` in the state directory, WAL
/// mode): hubd writes, `hubctl history` and `hubctl events` read while it runs.
public final class History: Sendable {
    public static let fileName = "history.sqlite"

    private let writer: any DatabaseWriter
    public let path: String

    /// Opens (creating when `create`) the history in `directory`.
    public init(directory: String, create: Bool = true) throws(HistoryError) {
        path = directory + "/" + Self.fileName
        do {
            if create {
                try createDirectory(directory)
                writer = try DatabasePool(path: path)
            } else {
                guard FileManager.default.fileExists(atPath: path) else { throw HistoryError.missing(path: path) }
                var configuration = Configuration()
                configuration.readonly = true
                writer = try DatabaseQueue(path: path, configuration: configuration)
            }
            if create { try migrator.migrate(writer) }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    private var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE readings (sensor TEXT NOT NULL, time INTEGER NOT NULL, pm25 REAL, pm10 REAL);
                    CREATE INDEX readings_by_sensor ON readings(sensor, time);
                    CREATE TABLE events (
                        sensor TEXT NOT NULL, time INTEGER NOT NULL, kind TEXT NOT NULL,
                        old TEXT NOT NULL, new TEXT NOT NULL, value TEXT);
                    CREATE INDEX events_by_sensor ON events(sensor, time);
                    CREATE INDEX events_by_time ON events(time);
                    """)
        }
        // Events are the hub's one event type, topic included (rows written before keep an empty one).
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "ALTER TABLE events ADD COLUMN topic TEXT NOT NULL DEFAULT ''")
        }
        // Events have ids (sensor id and sequence): an event replayed from the journal after a crash is one row.
        // Rows written before keep NULL, which a unique index lets repeat.
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    ALTER TABLE events ADD COLUMN id TEXT;
                    CREATE UNIQUE INDEX events_by_id ON events(id);
                    """)
        }
        return migrator
    }

    /// Min, mean and max of one period.
    public struct Aggregate: Sendable, Hashable {
        public var start: Timestamp
        public var count: Int
        public var pm25: (min: Double, mean: Double, max: Double)?
        public var pm10: (min: Double, mean: Double, max: Double)?

        public static func == (lhs: Aggregate, rhs: Aggregate) -> Bool {
            lhs.start == rhs.start && lhs.count == rhs.count
                && lhs.pm25.map { [$0.min, $0.mean, $0.max] }
                    == rhs.pm25.map { [$0.min, $0.mean, $0.max] }
                && lhs.pm10.map { [$0.min, $0.mean, $0.max] } == rhs.pm10.map { [$0.min, $0.mean, $0.max] }
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(start) }
    }

    /// Periods for aggregates, in UTC; weeks start on Monday.
    public enum Period: String, Sendable, CaseIterable {
        case hour, day, week, month

        /// SQL for the period's start, in milliseconds, from `time`.
        var bucket: String {
            switch self {
            case .hour: "(time / 3600000) * 3600000"
            case .day: "(time / 86400000) * 86400000"
            // 1970-01-05 was a Monday.
            case .week: "((time - 345600000) / 604800000) * 604800000 + 345600000"
            case .month: "CAST(strftime('%s', date(time / 1000, 'unixepoch', 'start of month')) AS INTEGER) * 1000"
            }
        }
    }

    /// Appends readings and events in one transaction.
    public func record(readings: [(sensor: String, reading: ParticulateReading)], events: [SensorEvent])
        async throws(HistoryError)
    {
        guard !readings.isEmpty || !events.isEmpty else { return }
        do {
            try await writer.write { db in
                let insertReading = try db.cachedStatement(sql: "INSERT INTO readings VALUES (?, ?, ?, ?)")
                for (sensor, reading) in readings {
                    try insertReading.execute(arguments: [
                        sensor, reading.time.millisecondsSince1970, reading.pm25, reading.pm10,
                    ])
                }
                let insertEvent = try db.cachedStatement(
                    sql: "INSERT OR IGNORE INTO events (sensor, time, kind, old, new, value, topic, id)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                for event in events {
                    try insertEvent.execute(arguments: [
                        event.sensor, event.time.millisecondsSince1970, event.kind.rawValue, event.oldStatus,
                        event.newStatus, event.value, event.topic, event.id.isEmpty ? nil : event.id,
                    ])
                }
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// Deletes what is older than `time`; returns how many rows went.
    @discardableResult
    public func prune(before time: Timestamp) async throws(HistoryError) -> Int {
        do {
            return try await writer.write { db in
                try db.execute(sql: "DELETE FROM readings WHERE time < ?", arguments: [time.millisecondsSince1970])
                var deleted = db.changesCount
                try db.execute(sql: "DELETE FROM events WHERE time < ?", arguments: [time.millisecondsSince1970])
                deleted += db.changesCount
                return deleted
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// A sensor's readings since `time`, oldest first.
    public func readings(of sensor: String, since time: Timestamp) throws(HistoryError) -> [ParticulateReading] {
        do {
            return try writer.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT time, pm25, pm10 FROM readings WHERE sensor = ? AND time >= ? ORDER BY time",
                    arguments: [sensor, time.millisecondsSince1970]
                ).map { row in
                    ParticulateReading(
                        pm25: row["pm25"], pm10: row["pm10"], time: Timestamp(millisecondsSince1970: row["time"]))
                }
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// Min, mean and max per `period` of a sensor's readings since `time`.
    public func aggregates(of sensor: String, since time: Timestamp, per period: Period) throws(HistoryError)
        -> [Aggregate]
    {
        do {
            return try writer.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(period.bucket) AS start, count(*) AS n,
                               min(pm25) AS a, avg(pm25) AS b, max(pm25) AS c,
                               min(pm10) AS d, avg(pm10) AS e, max(pm10) AS f
                        FROM readings WHERE sensor = ? AND time >= ? GROUP BY start ORDER BY start
                        """,
                    arguments: [sensor, time.millisecondsSince1970]
                ).map { row in
                    let pm25: (Double, Double, Double)? = (row["a"] as Double?).map { ($0, row["b"], row["c"]) }
                    let pm10: (Double, Double, Double)? = (row["d"] as Double?).map { ($0, row["e"], row["f"]) }
                    return Aggregate(
                        start: Timestamp(millisecondsSince1970: row["start"]), count: row["n"], pm25: pm25, pm10: pm10)
                }
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// Status events since `time` (of one sensor, or all), oldest first.
    public func events(of sensor: String?, since time: Timestamp, limit: Int = 10_000) throws(HistoryError)
        -> [SensorEvent]
    {
        do {
            return try writer.read { db in
                let filter = sensor == nil ? "" : "sensor = ? AND "
                var arguments: [(any DatabaseValueConvertible)?] = sensor.map { [$0] } ?? []
                arguments += [time.millisecondsSince1970, limit]
                return try Row.fetchAll(
                    db,
                    sql: "SELECT * FROM events WHERE \(filter)time >= ? ORDER BY time, rowid LIMIT ?",
                    arguments: StatementArguments(arguments)
                ).map { row in
                    SensorEvent(
                        id: row["id"] ?? "", kind: SensorEvent.Kind(rawValue: row["kind"]), sensor: row["sensor"],
                        topic: row["topic"],
                        oldStatus: row["old"], newStatus: row["new"],
                        time: Timestamp(millisecondsSince1970: row["time"]), value: row["value"])
                }
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }
}

/// Why the history can't be read or written.
public enum HistoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No history yet: hubd has not recorded anything in this state directory.
    case missing(path: String)
    /// SQLite said no.
    case database(path: String, String)

    public var description: String {
        switch self {
        case .missing(let path): "no history at \(path) yet: hubd records it while it runs"
        case .database(let path, let reason): "\(path): \(reason)"
        }
    }
}
