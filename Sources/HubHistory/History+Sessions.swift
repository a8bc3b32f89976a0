import Foundation
import GRDB
import HubCore

// Mobile sensors' recording sessions, as the history has them: each from its `session` events (the start's id is
// the session's; the end's value names it), its readings by the `session` column. A fixed sensor's readings have no
// session: together they are its one open-ended session, `fixed:<sensor>`.
extension History {
    /// Sessions started since `time` (of one sensor, or all), newest first, with their readings counted.
    public func sessions(of sensor: String?, since time: Timestamp, limit: Int = 1000) throws(HistoryError)
        -> [SessionSummary]
    {
        guard hasPositions else { return [] }
        var arguments: [(any DatabaseValueConvertible)?] = [time.millisecondsSince1970]
        if let sensor { arguments.append(sensor) }
        arguments.append(limit)
        return try fetchSessions(
            where: "s.time >= ?" + (sensor == nil ? "" : " AND s.sensor = ?"), arguments: arguments)
    }

    /// The session called `id` (a recorded one's id, or `fixed:<sensor>`), or `nil` when the history has none.
    public func session(_ id: String) throws(HistoryError) -> SessionSummary? {
        if let sensor = SessionSummary.fixedSensor(in: id) {
            let sql =
                "SELECT count(*) AS n, min(time) AS first, max(time) AS last FROM readings WHERE sensor = ?"
                + (hasPositions ? " AND session IS NULL" : "")
            let row = try read { db in try Row.fetchOne(db, sql: sql, arguments: [sensor]) }
            guard let row, let first: Int64 = row["first"] else { return nil }
            return SessionSummary(
                id: id, sensor: sensor, started: Timestamp(millisecondsSince1970: first), ended: nil,
                readings: row["n"])
        }
        guard hasPositions else { return nil }
        return try fetchSessions(where: "s.value = ?", arguments: [id, 1]).first
    }

    /// The readings of the session called `id`, oldest first, at most `limit` (the first ones).
    public func track(of id: String, limit: Int = 1_000_000) throws(HistoryError) -> [TrackPoint] {
        let positions =
            hasPositions ? "lat, lon, alt, accuracy" : "NULL AS lat, NULL AS lon, NULL AS alt, NULL AS accuracy"
        let values = Series.allCases.map { "\(column(of: $0)) AS \($0)" }.joined(separator: ", ")
        let filter: String
        let key: String
        if let sensor = SessionSummary.fixedSensor(in: id) {
            filter = "sensor = ?" + (hasPositions ? " AND session IS NULL" : "")
            key = sensor
        } else {
            guard hasPositions else { return [] }
            filter = "session = ?"
            key = id
        }
        return try read { db in
            try Row.fetchAll(
                db, sql: "SELECT time, \(positions), \(values) FROM readings WHERE \(filter) ORDER BY time LIMIT ?",
                arguments: [key, limit]
            ).map { row in
                var position: GeoFix?
                if let lat: Double = row["lat"], let lon: Double = row["lon"],
                    let point = GeoPoint(latitude: lat, longitude: lon)
                {
                    position = GeoFix(point: point, altitude: row["alt"], accuracy: row["accuracy"])
                }
                return TrackPoint(
                    time: Timestamp(millisecondsSince1970: row["time"]), position: position, pm25: row["pm25"],
                    pm10: row["pm10"], value: row["value"])
            }
        }
    }

    private func fetchSessions(where filter: String, arguments: [(any DatabaseValueConvertible)?])
        throws(HistoryError) -> [SessionSummary]
    {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT s.value AS id, s.sensor AS sensor, s.time AS started,
                        (SELECT min(e.time) FROM events e
                            WHERE e.kind = 'session' AND e.value = s.value AND e.new = 'idle') AS ended,
                        (SELECT count(*) FROM readings r WHERE r.session = s.value) AS n
                    FROM events s
                    WHERE s.kind = 'session' AND s.new = 'recording' AND \(filter)
                    ORDER BY s.time DESC LIMIT ?
                    """,
                arguments: StatementArguments(arguments)
            ).map { row in
                SessionSummary(
                    id: row["id"], sensor: row["sensor"], started: Timestamp(millisecondsSince1970: row["started"]),
                    ended: (row["ended"] as Int64?).map(Timestamp.init(millisecondsSince1970:)), readings: row["n"])
            }
        }
    }
}
