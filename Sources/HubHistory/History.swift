import Foundation
import GRDB
import HubCore
import HubSupport

/// Readings (particulate and numeric sensors') and status events over time, in SQLite (`history.sqlite` in the state
/// directory, WAL mode): hubd writes, `hubctl history`, `hubctl events` and the dashboard read while it runs.
public final class History: Sendable {
    public static let fileName = "history.sqlite"

    private let writer: any DatabaseWriter
    public let path: String
    /// The state directory it is in.
    public let directory: String
    /// What reads each series: its column, or `NULL` where the file has none yet (opened read-only, written by a
    /// hubd from before numeric readings, which migrates it when it restarts).
    private let columns: [Series: String]
    /// Whether the readings have positions and sessions (v5): a file written by an older hubd, opened read-only,
    /// has none until that hubd's successor migrates it.
    let hasPositions: Bool

    /// Opens (creating when `create`) the history in `directory`.
    public init(directory: String, create: Bool = true) throws(HistoryError) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        do {
            if create {
                try createDirectory(directory)
                // SQLite creates the file with 0644 less the umask, and its -wal and -shm with the file's mode: owner
                // only, whatever the umask (a copied SD card aside, the doors' history is nobody else's business).
                let created = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
                if created >= 0 { close(created) }
                chmod(path, 0o600)
                let pool = try DatabasePool(path: path)
                // GRDB sets NORMAL for WAL, where a commit is durable only at the next checkpoint; hubd acknowledges
                // the journal's events once committed here, so a commit is flushed (once a `commit_interval`).
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
                writer = pool
                try Self.migrator.migrate(writer)
            } else {
                guard FileManager.default.fileExists(atPath: path) else { throw HistoryError.missing(path: path) }
                var configuration = Configuration()
                configuration.readonly = true
                writer = try DatabaseQueue(path: path, configuration: configuration)
            }
            let present = Set(try writer.read { db in try db.columns(in: "readings").map(\.name) })
            columns = Dictionary(
                uniqueKeysWithValues: Series.allCases.map { ($0, present.contains($0.rawValue) ? $0.rawValue : "NULL") }
            )
            hasPositions = present.contains("session")
        } catch let error as HistoryError {
            throw error
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    private static var migrator: DatabaseMigrator {
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
        // Numeric sensors' readings: a `value` column on `readings` rather than a table of their own, so one
        // index, one insert, one aggregate query and one prune serve every kind of reading (SQLite stores a NULL
        // in a row's trailing columns at no cost). A particulate row has pm25/pm10 and a NULL value; a numeric
        // row a value and NULL pm25/pm10. The unit is the registry's, not a row's: it is the sensor's, and a
        // corrected unit then applies to its whole history. Rows written before are particulate, as they were.
        migrator.registerMigration("v4") { db in
            try db.execute(sql: "ALTER TABLE readings ADD COLUMN value REAL")
        }
        // Mobile sensors: where each reading was taken and the recording session it belongs to (NULL for a fixed
        // sensor's, and for every row written before). Partial indexes, so fixed sensors' rows cost them nothing.
        migrator.registerMigration("v5") { db in
            try db.execute(
                sql: """
                    ALTER TABLE readings ADD COLUMN session TEXT;
                    ALTER TABLE readings ADD COLUMN lat REAL;
                    ALTER TABLE readings ADD COLUMN lon REAL;
                    ALTER TABLE readings ADD COLUMN alt REAL;
                    ALTER TABLE readings ADD COLUMN accuracy REAL;
                    CREATE INDEX readings_by_session ON readings(session, time) WHERE session IS NOT NULL;
                    CREATE INDEX readings_by_place ON readings(lat, lon) WHERE lat IS NOT NULL;
                    CREATE INDEX events_by_session ON events(value) WHERE kind = 'session';
                    """)
        }
        // The journal's position the rows reach, written with them (one row): hubd's journal keeps the readings
        // until they are here, and after a crash hands again those past the last acknowledgement it wrote down,
        // some of which this file may have. Readings have no id to be told apart by, as events do.
        migrator.registerMigration("v6") { db in
            try db.execute(sql: "CREATE TABLE journal_position (through INTEGER NOT NULL)")
        }
        // Events are told apart by id through `events_by_time` (an event handed over again has its own time), not
        // an index of their own: ids start with the sensor's, so each commit changed a leaf of that index per sensor,
        // whole pages an SD card writes (issue 55).
        migrator.registerMigration("v7") { db in
            try db.execute(sql: "DROP INDEX events_by_id")
        }
        return migrator
    }

    /// Runs `body` on a read connection; what SQLite says becomes a `HistoryError`.
    func read<T>(_ body: (Database) throws -> T) throws(HistoryError) -> T {
        do {
            return try writer.read(body)
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// The column holding `series` in this file (`NULL` in a file from before it).
    func column(of series: Series) -> String { columns[series] ?? "NULL" }

    /// What a sensor's readings measure, a column of `readings` each: a particulate sensor's PM2.5 and PM10, a
    /// numeric sensor's value.
    public enum Series: String, Sendable, Hashable, CaseIterable {
        case pm25, pm10, value

        /// The series' number in `reading`, if it has one.
        public func value(of reading: SensorReading) -> Double? {
            switch (self, reading) {
            case (.pm25, .particulate(let reading)): reading.pm25
            case (.pm10, .particulate(let reading)): reading.pm10
            case (.value, .numeric(let number, _, _, _)): number
            default: nil
            }
        }
    }

    /// Min, mean and max of a series over one period.
    public typealias Spread = HubCore.Spread

    /// One period's readings of a sensor: how many, and the spread of each series they have.
    public struct Aggregate: Sendable, Hashable {
        public var start: Timestamp
        public var count: Int
        public var spreads: [Series: Spread]

        public init(start: Timestamp, count: Int, spreads: [Series: Spread]) {
            self.start = start
            self.count = count
            self.spreads = spreads
        }

        public subscript(series: Series) -> Spread? { spreads[series] }
        public var pm25: Spread? { spreads[.pm25] }
        public var pm10: Spread? { spreads[.pm10] }
        /// A numeric sensor's value.
        public var value: Spread? { spreads[.value] }
    }

    /// Periods for aggregates, in UTC; weeks start on Monday.
    public enum Period: String, Sendable, CaseIterable {
        case hour, day, week, month

        /// SQL for the period's start, in milliseconds, from `time`.
        var bucket: String {
            guard let (length, offset) = length else {
                return "CAST(strftime('%s', date(time / 1000, 'unixepoch', 'start of month')) AS INTEGER) * 1000"
            }
            return "((time - \(offset)) / \(length)) * \(length) + \(offset)"
        }

        /// How long the period is and where one begins, in milliseconds since 1970 (weeks: 1970-01-05 was a Monday);
        /// nil for a month.
        var length: (Int64, offset: Int64)? {
            switch self {
            case .hour: (3_600_000, 0)
            case .day: (86_400_000, 0)
            case .week: (604_800_000, 345_600_000)
            case .month: nil
            }
        }

        /// The start of the period `time` is in (as `bucket` says it in SQL), for an hour, a day or a week.
        func start(of time: Timestamp) -> Timestamp {
            guard let (length, offset) = length else { preconditionFailure("a month's start is SQL's (`bucket`)") }
            let since = time.millisecondsSince1970 - offset
            // SQL's integer division rounds toward zero, as Swift's does: the same for any time since 1970.
            return Timestamp(millisecondsSince1970: (since / length) * length + offset)
        }
    }

    /// Appends readings and events in one transaction, on the background thread (`BackgroundThread`): the journal
    /// holds the events until they are here, and a thousand rows a second must not take a core from the
    /// notifications.
    /// - Parameter position: the journal's position these rows reach (`journalPosition`), written in the same
    ///   transaction.
    public func record(readings: [RecordedReading], events: [SensorEvent], through position: Int? = nil)
        async throws(HistoryError)
    {
        guard !readings.isEmpty || !events.isEmpty || position != nil else { return }
        do {
            try await BackgroundThread.shared.run { [writer] () throws(any Error) in
                try Self.insert(readings, events, through: position, into: writer)
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    private static func insert(
        _ readings: [RecordedReading], _ events: [SensorEvent], through position: Int?, into writer: any DatabaseWriter
    ) throws {
        try writer.write { db in
            if let position {
                try db.execute(sql: "DELETE FROM journal_position")
                try db.execute(sql: "INSERT INTO journal_position (through) VALUES (?)", arguments: [position])
            }
            let columns = Series.allCases.map(\.rawValue) + ["session", "lat", "lon", "alt", "accuracy"]
            let insertReading = try db.cachedStatement(
                sql: "INSERT INTO readings (sensor, time, \(columns.joined(separator: ", ")))"
                    + " VALUES (?, ?\(String(repeating: ", ?", count: columns.count)))")
            for recorded in readings {
                let reading = recorded.reading
                let position = reading.position
                var values: [(any DatabaseValueConvertible)?] = Series.allCases.map { $0.value(of: reading) }
                values += [
                    recorded.session, position?.latitude, position?.longitude, position?.altitude,
                    position?.accuracy,
                ]
                try insertReading.execute(
                    arguments: StatementArguments([recorded.sensor, reading.time.millisecondsSince1970] + values))
            }
            // An event the file has (the journal hands it over again after a crash) is not written twice.
            let insertEvent = try db.cachedStatement(
                sql: "INSERT INTO events (sensor, time, kind, old, new, value, topic, id)"
                    + " SELECT ?, ?, ?, ?, ?, ?, ?, ?"
                    + " WHERE NOT EXISTS (SELECT 1 FROM events WHERE time = ? AND id = ?)")
            for event in events {
                let id = event.id.isEmpty ? nil : event.id
                let time = event.time.millisecondsSince1970
                try insertEvent.execute(arguments: [
                    event.sensor, time, event.kind.rawValue, event.oldStatus, event.newStatus, event.value,
                    event.topic, id, time, id,
                ])
            }
        }
    }

    /// The journal's position the rows reach, as the last `record(readings:events:through:)` that named one wrote
    /// it; 0 before any did.
    public func journalPosition() throws(HistoryError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT through FROM journal_position") ?? 0 }
    }

    /// Deletes readings (of every kind) and events older than `time`; returns how many rows went.
    ///
    /// On the background thread too, so that it alone writes: a write that finds the writer's queue busy (a prune
    /// running on it) makes libdispatch wake a worker for the queue, and a worker it starts then is started by the
    /// lowered thread and keeps its nice value, serving everything after (seen in `BackgroundThreadTests`: a
    /// `com.apple.root.default-qos` thread at nice 10).
    @discardableResult
    public func prune(before time: Timestamp) async throws(HistoryError) -> Int {
        do {
            return try await BackgroundThread.shared.run { [writer] () throws(any Error) -> Int in
                try writer.write { db in
                    try db.execute(sql: "DELETE FROM readings WHERE time < ?", arguments: [time.millisecondsSince1970])
                    var deleted = db.changesCount
                    try db.execute(sql: "DELETE FROM events WHERE time < ?", arguments: [time.millisecondsSince1970])
                    deleted += db.changesCount
                    return deleted
                }
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// A sensor's readings since `time`, oldest first; a numeric one's without its unit (the registry has it).
    public func readings(of sensor: String, since time: Timestamp) throws(HistoryError) -> [SensorReading] {
        let selected = Series.allCases.map { "\(columns[$0] ?? "NULL") AS \($0)" }.joined(separator: ", ")
        do {
            return try writer.read { db in
                try Row.fetchAll(
                    db,
                    sql: "SELECT time, \(selected) FROM readings WHERE sensor = ? AND time >= ? ORDER BY time",
                    arguments: [sensor, time.millisecondsSince1970]
                ).map { row in
                    let time = Timestamp(millisecondsSince1970: row["time"])
                    if let value: Double = row["value"] { return .numeric(value, unit: nil, time: time) }
                    return .particulate(ParticulateReading(pm25: row["pm25"], pm10: row["pm10"], time: time))
                }
            }
        } catch {
            throw .database(path: path, "\(error)")
        }
    }

    /// Min, mean and max per `period` of a sensor's readings since `time`, for each series they have.
    public func aggregates(of sensor: String, since time: Timestamp, per period: Period) throws(HistoryError)
        -> [Aggregate]
    {
        let spreads = Series.allCases.map { series in
            let column = columns[series] ?? "NULL"
            return "min(\(column)) AS \(series)_min, avg(\(column)) AS \(series)_mean, max(\(column)) AS \(series)_max"
        }
        do {
            return try writer.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(period.bucket) AS start, count(*) AS n, \(spreads.joined(separator: ", "))
                        FROM readings WHERE sensor = ? AND time >= ? GROUP BY start ORDER BY start
                        """,
                    arguments: [sensor, time.millisecondsSince1970]
                ).map { row in
                    var aggregate = Aggregate(
                        start: Timestamp(millisecondsSince1970: row["start"]), count: row["n"], spreads: [:])
                    for series in Series.allCases {
                        guard let min: Double = row["\(series)_min"] else { continue }
                        aggregate.spreads[series] = Spread(
                            min: min, mean: row["\(series)_mean"], max: row["\(series)_max"])
                    }
                    return aggregate
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
                    sql: """
                        SELECT * FROM (SELECT rowid AS position, * FROM events WHERE \(filter)time >= ?
                        ORDER BY time DESC, rowid DESC LIMIT ?) ORDER BY time, position
                        """,
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
    /// SQLite (or PostgreSQL) said no.
    case database(path: String, String)
    /// The history's database (`store:`) could not be reached.
    case unavailable(location: String, String)

    public var description: String {
        switch self {
        case .missing(let path): "no history at \(path) yet: hubd records it while it runs"
        case .database(let path, let reason): "\(path): \(reason)"
        case .unavailable(let location, let reason): "the history's database \(location) can't be reached: \(reason)"
        }
    }
}
