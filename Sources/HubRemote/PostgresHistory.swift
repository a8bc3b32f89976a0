import HubCore
import HubHistory
import HubSupport
import Logging
import PostgresNIO

/// The history in the store's PostgreSQL database (`store: postgres://…`): the `readings` and `events` tables
/// `remote:` writes, of one hub (a cluster's group), read back with the same questions and answers as
/// `history.sqlite` (`HistoryReader`). Every agent of a cluster writes there, so any agent and any hubctl sees all of
/// it. Sessions come from their `session` events, as in the file.
public final class PostgresHistory: HistoryReader {
    public let server: DatabaseSettings
    /// The hub whose rows are read (`HubConfiguration.storeHub`).
    public let hub: String
    private let session: DatabaseSession

    /// - Parameters:
    ///   - limit: the longest one question (connecting included) may take.
    ///   - keepsConnection: keep the connection for the next question (hubd); otherwise each closes it (hubctl).
    public init(
        server: DatabaseSettings, hub: String, applicationName: String, limit: Duration = .seconds(30),
        keepsConnection: Bool = true, logger: Logger
    ) {
        self.server = server
        self.hub = hub
        session = DatabaseSession(
            server: server, applicationName: applicationName, limit: limit, keepsConnection: keepsConnection,
            logger: logger)
    }

    public var location: String { server.url + " (hub \(hub))" }

    /// Closes the connection, if there is one.
    public func close() async { await session.close() }

    public func readings(of sensor: String, since time: Timestamp) async throws(HistoryError) -> [SensorReading] {
        let hub = hub
        let rows = try await query { connection in
            try await connection.query(
                """
                SELECT \(unescaped: Self.milliseconds("time")), pm25, pm10, value FROM readings
                WHERE hub = \(hub) AND sensor = \(sensor) AND time >= 'epoch'::timestamptz + \(time.millisecondsSince1970)::bigint * interval '1 millisecond'
                ORDER BY time
                """, logger: connection.logger
            ).collect((Int64, Double?, Double?, Double?).self)
        }
        return rows.map { row in
            let time = Timestamp(millisecondsSince1970: row.0)
            if let value = row.3 { return .numeric(value, unit: nil, time: time) }
            return .particulate(ParticulateReading(pm25: row.1, pm10: row.2, time: time))
        }
    }

    public func aggregates(of sensor: String, since time: Timestamp, per period: History.Period)
        async throws(HistoryError) -> [History.Aggregate]
    {
        let hub = hub
        let start = Self.milliseconds("date_trunc('\(period.rawValue)', time AT TIME ZONE 'UTC')")
        let rows = try await query { connection in
            try await connection.query(
                """
                SELECT \(unescaped: start) AS start, count(*),
                    min(pm25), avg(pm25), max(pm25), min(pm10), avg(pm10), max(pm10),
                    min(value), avg(value), max(value)
                FROM readings WHERE hub = \(hub) AND sensor = \(sensor) AND time >= 'epoch'::timestamptz + \(time.millisecondsSince1970)::bigint * interval '1 millisecond'
                GROUP BY 1 ORDER BY 1
                """, logger: connection.logger
            ).collect(
                (
                    Int64, Int64, Double?, Double?, Double?, Double?, Double?, Double?, Double?, Double?, Double?
                ).self)
        }
        return rows.map { row in
            var aggregate = History.Aggregate(
                start: Timestamp(millisecondsSince1970: row.0), count: Int(row.1), spreads: [:])
            let spreads: [(History.Series, Double?, Double?, Double?)] = [
                (.pm25, row.2, row.3, row.4), (.pm10, row.5, row.6, row.7), (.value, row.8, row.9, row.10),
            ]
            for (series, min, mean, max) in spreads {
                guard let min, let mean, let max else { continue }
                aggregate.spreads[series] = History.Spread(min: min, mean: mean, max: max)
            }
            return aggregate
        }
    }

    public func events(of sensor: String?, since time: Timestamp, limit: Int) async throws(HistoryError)
        -> [SensorEvent]
    {
        let hub = hub
        let rows = try await query { connection in
            try await connection.query(
                """
                SELECT * FROM (
                    SELECT id, kind, sensor, topic, old, new, value, \(unescaped: Self.milliseconds("time")) AS at
                    FROM events
                    WHERE hub = \(hub) AND (\(sensor)::text IS NULL OR sensor = $2)
                        AND time >= 'epoch'::timestamptz + \(time.millisecondsSince1970)::bigint * interval '1 millisecond'
                    ORDER BY time DESC, id DESC LIMIT \(limit)
                ) AS newest ORDER BY at, id
                """, logger: connection.logger
            ).collect((String, String, String, String, String, String, String?, Int64).self)
        }
        return rows.map { row in
            SensorEvent(
                id: row.0, kind: SensorEvent.Kind(rawValue: row.1), sensor: row.2, topic: row.3, oldStatus: row.4,
                newStatus: row.5, time: Timestamp(millisecondsSince1970: row.7), value: row.6)
        }
    }

    public func sessions(of sensor: String?, since time: Timestamp, limit: Int) async throws(HistoryError)
        -> [SessionSummary]
    {
        var bindings = PostgresBindings()
        bindings.append(hub)
        bindings.append(time.millisecondsSince1970)
        bindings.append(sensor)
        bindings.append(limit)
        return try await fetchSessions(
            """
            s.time >= 'epoch'::timestamptz + $2::bigint * interval '1 millisecond'
                AND ($3::text IS NULL OR s.sensor = $3) ORDER BY s.time DESC LIMIT $4
            """, bindings)
    }

    public func session(_ id: String) async throws(HistoryError) -> SessionSummary? {
        guard let sensor = SessionSummary.fixedSensor(in: id) else {
            var bindings = PostgresBindings()
            bindings.append(hub)
            bindings.append(id)
            return try await fetchSessions("s.value = $2 LIMIT 1", bindings).first
        }
        let hub = hub
        let row = try await query { connection in
            try await connection.query(
                """
                SELECT count(*), \(unescaped: Self.milliseconds("min(time)")) FROM readings
                WHERE hub = \(hub) AND sensor = \(sensor) AND session IS NULL
                """, logger: connection.logger
            ).collect((Int64, Int64?).self)
        }.first
        guard let row, let first = row.1 else { return nil }
        return SessionSummary(
            id: id, sensor: sensor, started: Timestamp(millisecondsSince1970: first), ended: nil, readings: Int(row.0))
    }

    public func track(of id: String, limit: Int) async throws(HistoryError) -> [TrackPoint] {
        let hub = hub
        let fixed = SessionSummary.fixedSensor(in: id)
        let filter = fixed == nil ? "session = $2" : "sensor = $2 AND session IS NULL"
        let sql = """
            SELECT \(Self.milliseconds("time")), lat, lon, alt, accuracy, pm25, pm10, value
            FROM readings WHERE hub = $1 AND \(filter) ORDER BY time LIMIT $3
            """
        var bindings = PostgresBindings()
        bindings.append(hub)
        bindings.append(fixed ?? id)
        bindings.append(limit)
        let rows = try await query { [bindings] connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: connection.logger)
                .collect((Int64, Double?, Double?, Double?, Double?, Double?, Double?, Double?).self)
        }
        return rows.map { row in
            var position: GeoFix?
            if let lat = row.1, let lon = row.2, let point = GeoPoint(latitude: lat, longitude: lon) {
                position = GeoFix(point: point, altitude: row.3, accuracy: row.4)
            }
            return TrackPoint(
                time: Timestamp(millisecondsSince1970: row.0), position: position, pm25: row.5, pm10: row.6,
                value: row.7)
        }
    }

    public func pollutionReadings(in box: GeoBoundingBox, since time: Timestamp, sensors: [String]?, limit: Int)
        async throws(HistoryError) -> History.AreaReadings
    {
        guard sensors?.isEmpty != true else { return History.AreaReadings(readings: [], matched: 0) }
        let hub = hub
        let filter = """
            hub = $1 AND lat IS NOT NULL AND lat BETWEEN $2 AND $3 AND lon BETWEEN $4 AND $5
                AND time >= 'epoch'::timestamptz + $6::bigint * interval '1 millisecond' AND pm25 IS NOT NULL
                AND ($7::text[] IS NULL OR sensor = ANY($7))
            """
        var bindings = PostgresBindings()
        bindings.append(hub)
        for edge in [box.south, box.north, box.west, box.east] { bindings.append(edge) }
        bindings.append(time.millisecondsSince1970)
        bindings.append(sensors)
        let counted = bindings
        bindings.append(max(0, limit))
        let all = bindings
        let (matched, rows) = try await query { connection in
            let matched =
                try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*) FROM readings WHERE \(filter)", binds: counted),
                    logger: connection.logger
                ).collect(Int64.self).first ?? 0
            // Sorting by time costs a sort of every match: only done when the cap leaves some out.
            let order = matched > limit ? " ORDER BY time DESC" : ""
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT lat, lon, pm25 FROM readings WHERE \(filter)\(order) LIMIT $8", binds: all),
                logger: connection.logger
            ).collect((Double, Double, Double).self)
            return (Int(matched), rows)
        }
        let readings = rows.compactMap { row in
            GeoPoint(latitude: row.0, longitude: row.1).map { PollutionReading(point: $0, pm25: row.2) }
        }
        return History.AreaReadings(readings: readings, matched: matched)
    }

    /// Deletes this hub's readings and events older than `time`; returns how many rows went.
    public func prune(before time: Timestamp) async throws(HistoryError) -> Int {
        let hub = hub
        return try await query { connection in
            var deleted = 0
            for table in ["readings", "events"] {
                let rows = try await connection.query(
                    """
                    WITH gone AS (DELETE FROM \(unescaped: table) WHERE hub = \(hub)
                        AND time < 'epoch'::timestamptz + \(time.millisecondsSince1970)::bigint * interval '1 millisecond'
                        RETURNING 1)
                    SELECT count(*) FROM gone
                    """, logger: connection.logger
                ).collect(Int64.self)
                deleted += Int(rows.first ?? 0)
            }
            return deleted
        }
    }

    // MARK: Helpers

    /// Sessions from their `session` events, as `History` has them; `filter` follows `WHERE` on the starts `s`,
    /// `bindings` start with the hub (`$1`).
    private func fetchSessions(_ filter: String, _ bindings: PostgresBindings) async throws(HistoryError)
        -> [SessionSummary]
    {
        let sql = """
            SELECT s.value, s.sensor, \(Self.milliseconds("s.time")),
                (SELECT \(Self.milliseconds("min(e.time)")) FROM events e WHERE e.hub = s.hub AND e.kind = 'session'
                    AND e.value = s.value AND e.new = 'idle'),
                (SELECT count(*) FROM readings r WHERE r.hub = s.hub AND r.session = s.value)
            FROM events s
            WHERE s.hub = $1 AND s.kind = 'session' AND s.new = 'recording' AND \(filter)
            """
        let rows = try await query { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: connection.logger)
                .collect((String, String, Int64, Int64?, Int64).self)
        }
        return rows.map { row in
            SessionSummary(
                id: row.0, sensor: row.1, started: Timestamp(millisecondsSince1970: row.2),
                ended: row.3.map(Timestamp.init(millisecondsSince1970:)), readings: Int(row.4))
        }
    }

    /// Runs `body` on the connection; a failure is the database's answer or the database being unreachable.
    private func query<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T)
        async throws(HistoryError) -> T
    {
        do {
            return try await session.run(body)
        } catch {
            let reason = PostgresRegistry.reason(error)
            if PostgresRegistry.isServerError(error) { throw .database(path: location, reason) }
            throw .unavailable(location: location, reason)
        }
    }

    /// SQL for a `timestamptz` expression in whole milliseconds since 1970.
    static func milliseconds(_ expression: String) -> String { "(extract(epoch FROM \(expression)) * 1000)::bigint" }

}

extension PostgresRowSequence {
    /// Every row, decoded as `types`.
    func collect<each T: PostgresDecodable & Sendable>(_ types: (repeat each T).Type) async throws
        -> [(repeat each T)]
    {
        var rows: [(repeat each T)] = []
        for try await row in decode(types) { rows.append(row) }
        return rows
    }

    /// Every row's one column, decoded as `type`.
    func collect<T: PostgresDecodable & Sendable>(_ type: T.Type) async throws -> [T] {
        var rows: [T] = []
        for try await row in decode(type) { rows.append(row) }
        return rows
    }
}
