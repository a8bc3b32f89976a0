import Foundation
import GRDB
import HubCore

extension History {
    /// The most readings an area query hands back (about 5 MB of them). At one reading a second, an AirBeam-like
    /// sensor takes this many in 55 hours of walking inside the area; beyond it the pollution grid's interpolation
    /// (each cell looks at every reading within its search radius) grows slower than it grows more accurate.
    public static let maximumAreaReadings = 200_000

    /// PM2.5 readings taken inside a box, and how many there were before the cap.
    public struct AreaReadings: Sendable {
        /// Newest first.
        public var readings: [PollutionReading]
        /// Readings with a position and a PM2.5 in the box since the time: more than `readings.count` when capped.
        public var matched: Int

        public init(readings: [PollutionReading], matched: Int) {
            self.readings = readings
            self.matched = matched
        }

        /// Whether older readings were left out to keep to the cap.
        public var isCapped: Bool { matched > readings.count }
    }

    /// The PM2.5 readings with a position inside `box` since `time`, of every sensor or of `sensors` (names as the
    /// history has them).
    ///
    /// The query goes through the `readings_by_place` index (latitude range first, then longitude), so fixed
    /// sensors' rows, which have no position, cost nothing. Past `limit` matching readings the newest `limit` are
    /// kept and the rest left out, and `matched` says how many there were: the air a route is about to be walked
    /// in is more like the last days' than last month's, and a cap that sampled at random would make two
    /// identical requests answer differently. A file written by a hubd from before positions (opened read-only)
    /// has none, and answers an empty list.
    public func pollutionReadings(
        in box: GeoBoundingBox, since time: Timestamp, sensors: [String]? = nil,
        limit: Int = History.maximumAreaReadings
    ) throws(HistoryError) -> AreaReadings {
        guard hasPositions, sensors?.isEmpty != true else { return AreaReadings(readings: [], matched: 0) }
        var filter = """
            lat IS NOT NULL AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? AND time >= ? AND pm25 IS NOT NULL
            """
        var arguments: [(any DatabaseValueConvertible)?] = [
            box.south, box.north, box.west, box.east, time.millisecondsSince1970,
        ]
        if let sensors {
            filter += " AND sensor IN (\(Array(repeating: "?", count: sensors.count).joined(separator: ", ")))"
            arguments += sensors.map { $0 }
        }
        let from = "FROM readings INDEXED BY readings_by_place WHERE \(filter)"
        return try read { db in
            let matched =
                try Int.fetchOne(db, sql: "SELECT count(*) \(from)", arguments: StatementArguments(arguments)) ?? 0
            // Sorting by time costs a sort of every match: only done when the cap leaves some out.
            let order = matched > limit ? " ORDER BY time DESC, rowid DESC" : ""
            let rows = try Row.fetchCursor(
                db, sql: "SELECT lat, lon, pm25 \(from)\(order) LIMIT ?",
                arguments: StatementArguments(arguments + [max(0, limit)]))
            var readings: [PollutionReading] = []
            readings.reserveCapacity(min(matched, limit))
            while let row = try rows.next() {
                guard let point = GeoPoint(latitude: row[0], longitude: row[1]) else { continue }
                readings.append(PollutionReading(point: point, pm25: row[2]))
            }
            return AreaReadings(readings: readings, matched: matched)
        }
    }

    /// How SQLite runs the area query, for the test that keeps it on the index.
    func areaQueryPlan() throws(HistoryError) -> String {
        try read { db in
            try Row.fetchAll(
                db,
                sql: "EXPLAIN QUERY PLAN SELECT lat, lon, pm25 FROM readings INDEXED BY readings_by_place "
                    + "WHERE lat IS NOT NULL AND lat BETWEEN 0 AND 1 AND lon BETWEEN 0 AND 1 AND time >= 0 "
                    + "AND pm25 IS NOT NULL"
            ).map { $0["detail"] as String? ?? "" }.joined(separator: "\n")
        }
    }
}
