import Foundation
import HubCore
import HubTestKit
import Testing

@testable import HubHistory

/// The area query the least-polluted route reads: PM2.5 readings with a position in a box, since a time, of some
/// sensors, capped at the newest.
@Suite struct HistoryAreaTests {
    let now = Timestamp(iso8601: "2026-11-02T12:00:00Z")!

    func minutes(ago: Int) -> Timestamp {
        Timestamp(millisecondsSince1970: now.millisecondsSince1970 - Int64(ago) * 60_000)
    }

    func reading(
        _ sensor: String, _ latitude: Double?, _ longitude: Double?, pm25: Double?, ago: Int, pm10: Double? = 9
    ) -> RecordedReading {
        let position = latitude.flatMap { lat in
            longitude.flatMap { GeoPoint(latitude: lat, longitude: $0) }.map { GeoFix(point: $0) }
        }
        return RecordedReading(
            sensor: sensor,
            reading: .particulate(
                ParticulateReading(pm25: pm25, pm10: pm10, time: minutes(ago: ago), position: position)))
    }

    @Test func readingsInsideTheBoxSinceATimeOfSomeSensors() async throws {
        let directory = try TemporaryDirectory()
        let history = try History(directory: directory.path)
        #expect(history.hasPositions)
        try await history.record(
            readings: [
                reading("bike", 52.09, 5.12, pm25: 10, ago: 5),
                reading("bike", 52.095, 5.125, pm25: 20, ago: 4),
                reading("walk", 52.091, 5.121, pm25: 30, ago: 3),
                // Outside the box: north, then east.
                reading("bike", 52.2, 5.12, pm25: 40, ago: 3),
                reading("bike", 52.09, 5.3, pm25: 50, ago: 3),
                // Too old, no PM2.5, no position.
                reading("bike", 52.09, 5.12, pm25: 60, ago: 120),
                reading("bike", 52.09, 5.12, pm25: nil, ago: 2),
                reading("balcony", nil, nil, pm25: 70, ago: 1),
                RecordedReading(sensor: "thermo", reading: .numeric(21, unit: "°C", time: minutes(ago: 1))),
            ], events: [])
        let box = GeoBoundingBox(south: 52.08, west: 5.11, north: 52.1, east: 5.13)
        let all = try history.pollutionReadings(in: box, since: minutes(ago: 60))
        #expect(Set(all.readings.map(\.pm25)) == [10, 20, 30] && all.matched == 3 && !all.isCapped)
        #expect(all.readings.contains(PollutionReading(point: GeoPoint(latitude: 52.095, longitude: 5.125)!, pm25: 20)))
        let walk = try history.pollutionReadings(in: box, since: minutes(ago: 60), sensors: ["walk"])
        #expect(walk.readings.map(\.pm25) == [30])
        let none = try history.pollutionReadings(in: box, since: minutes(ago: 60), sensors: [])
        #expect(none.readings.isEmpty && none.matched == 0)
        let older = try history.pollutionReadings(in: box, since: minutes(ago: 180), sensors: ["bike", "walk"])
        #expect(Set(older.readings.map(\.pm25)) == [10, 20, 30, 60])
    }

    @Test func pastTheCapTheNewestAreKept() async throws {
        let directory = try TemporaryDirectory()
        let history = try History(directory: directory.path)
        try await history.record(
            readings: (1...10).map { reading("bike", 52.09, 5.12 + Double($0) / 10_000, pm25: Double($0), ago: $0) },
            events: [])
        let box = GeoBoundingBox(south: 52, west: 5, north: 53, east: 6)
        let capped = try history.pollutionReadings(in: box, since: minutes(ago: 60), limit: 4)
        #expect(capped.readings.map(\.pm25) == [1, 2, 3, 4])
        #expect(capped.matched == 10 && capped.isCapped)
    }

    /// The query uses the partial index on (lat, lon), not a scan of every reading.
    @Test func theQueryGoesThroughThePlaceIndex() throws {
        let directory = try TemporaryDirectory()
        let history = try History(directory: directory.path)
        let plan = try history.areaQueryPlan()
        #expect(plan.contains("USING INDEX readings_by_place (lat>? AND lat<?)"), "\(plan)")
    }
}
