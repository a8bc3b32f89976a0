import Foundation
import GRDB
import HubCore

/// The whole history, a page at a time in the order it was written: for copying it elsewhere
/// (`hubctl store migrate`).
extension History {
    /// Up to `limit` readings written after row `row` (0: from the start), with their row numbers. Their sensor ids
    /// are empty: the history keeps names.
    public func readings(afterRow row: Int64, limit: Int) throws(HistoryError) -> [(
        row: Int64, reading: RecordedReading
    )] {
        let series = Series.allCases.map { "\(column(of: $0)) AS \($0)" }.joined(separator: ", ")
        let place =
            hasPositions
            ? "session, lat, lon, alt, accuracy"
            : "NULL AS session, NULL AS lat, NULL AS lon, NULL AS alt, NULL AS accuracy"
        return try read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT rowid, sensor, time, \(series), \(place) FROM readings WHERE rowid > ? ORDER BY rowid LIMIT ?",
                arguments: [row, limit]
            ).map { row in
                let time = Timestamp(millisecondsSince1970: row["time"])
                var position: GeoFix?
                if let latitude: Double = row["lat"], let longitude: Double = row["lon"],
                    let point = GeoPoint(latitude: latitude, longitude: longitude)
                {
                    position = GeoFix(point: point, altitude: row["alt"], accuracy: row["accuracy"])
                }
                let reading: SensorReading
                if let value: Double = row["value"] {
                    reading = .numeric(value, unit: nil, time: time, position: position)
                } else {
                    reading = .particulate(
                        ParticulateReading(pm25: row["pm25"], pm10: row["pm10"], time: time, position: position))
                }
                return (row["rowid"], RecordedReading(sensor: row["sensor"], reading: reading, session: row["session"]))
            }
        }
    }

    /// Up to `limit` events written after row `row` (0: from the start), with their row numbers; an event written
    /// before events had ids has an empty one.
    public func events(afterRow row: Int64, limit: Int) throws(HistoryError) -> [(row: Int64, event: SensorEvent)] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT rowid, * FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?", arguments: [row, limit]
            ).map { row in
                let event = SensorEvent(
                    id: row["id"] ?? "", kind: SensorEvent.Kind(rawValue: row["kind"]), sensor: row["sensor"],
                    topic: row["topic"], oldStatus: row["old"], newStatus: row["new"],
                    time: Timestamp(millisecondsSince1970: row["time"]), value: row["value"])
                return (row["rowid"], event)
            }
        }
    }
}
