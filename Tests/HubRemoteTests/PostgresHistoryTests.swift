import Foundation
import HubCore
import HubHistory
import HubRemote
import HubTestKit
import Testing

/// The history in the store's database answers every question as `history.sqlite` does: the same readings and
/// events written to both (the file through `History.record`, the database through `PostgresRemote.send`, as hubd
/// writes each), then each of `HistoryReader`'s questions asked of both, against a real PostgreSQL 15.
@Suite struct PostgresHistoryTests {
    /// 40 days back, so that every period (hour to month) has several buckets.
    static let start = Timestamp.now.millisecondsSince1970 - 40 * 86_400_000
    static let session = "a1b2c3d4e5f6-1"
    static let openSession = "a1b2c3d4e5f6-3"

    static func at(_ offset: Int64) -> Timestamp { Timestamp(millisecondsSince1970: start + offset) }

    /// Particulate readings every 7 hours (some without PM10), numeric ones every 5, a walk of two sessions with
    /// positions (one ended), positioned readings outside any session, and status changes.
    static func data() -> (readings: [RecordedReading], events: [SensorEvent]) {
        var readings: [RecordedReading] = []
        for index in 0..<137 {
            let pm10: Double? = index % 5 == 0 ? nil : Double(index % 40) + 0.25
            readings.append(
                RecordedReading(
                    sensor: "air",
                    reading: .particulate(
                        ParticulateReading(
                            pm25: Double(index % 17) * 1.5 + 0.1, pm10: pm10, time: at(Int64(index) * 25_200_000))),
                    sensorID: "a1a1a1a1a1a1"))
        }
        for index in 0..<190 {
            readings.append(
                RecordedReading(
                    sensor: "temp",
                    reading: .numeric(
                        18 + Double(index % 11) / 3, unit: nil, time: at(Int64(index) * 18_000_000 + 1234)),
                    sensorID: "b2b2b2b2b2b2"))
        }
        func walk(_ index: Int, session: String?, from origin: Int64) -> RecordedReading {
            let fix = GeoFix(
                point: GeoPoint(latitude: 1.3 + Double(index) * 0.0002, longitude: 103.8 + Double(index % 7) * 0.0003)!,
                altitude: index % 2 == 0 ? 15 : nil, accuracy: 4.5)
            let reading = ParticulateReading(
                pm25: 5 + Double(index), pm10: 9, time: at(origin + Int64(index) * 10_000), position: fix)
            return RecordedReading(
                sensor: "walk", reading: .particulate(reading), sensorID: "a1b2c3d4e5f6", session: session)
        }
        let walked = Int64(30 * 86_400_000)
        readings += (0..<30).map { walk($0, session: session, from: walked) }
        readings += (0..<10).map { walk($0 + 40, session: openSession, from: walked + 3_600_000) }
        readings += (0..<5).map { walk($0 + 60, session: nil, from: walked + 7_200_000) }

        func sessionEvent(_ sequence: Int, starts: Bool, id: String, at time: Int64) -> SensorEvent {
            SensorEvent(
                id: SensorEvent.id(sensor: "a1b2c3d4e5f6", sequence: sequence), kind: .session, sensor: "walk",
                topic: "sensors/walk", oldStatus: starts ? "idle" : "recording",
                newStatus: starts ? "recording" : "idle", time: at(time), value: id)
        }
        var events = [
            sessionEvent(1, starts: true, id: session, at: walked - 1),
            sessionEvent(2, starts: false, id: session, at: walked + 300_000),
            sessionEvent(3, starts: true, id: openSession, at: walked + 3_600_000 - 1),
        ]
        for sequence in 1...20 {
            events.append(
                SensorEvent(
                    id: SensorEvent.id(sensor: "d00d00d00d00", sequence: sequence), kind: .changed, sensor: "door",
                    topic: "sensors/door", oldStatus: sequence % 2 == 0 ? "open" : "closed",
                    newStatus: sequence % 2 == 0 ? "closed" : "open", time: at(Int64(sequence) * 86_400_000 + 7)))
        }
        return (readings, events)
    }

    @Test func everyQuestionHasTheFilesAnswer() async throws {
        try await withPostgres { server in
            try await server.createDatabase("history")
            let (readings, events) = Self.data()
            let directory = try TemporaryDirectory(prefix: "history")
            let file = try History(directory: directory.path)
            try await file.record(readings: readings, events: events)
            let remote = try await PostgresRemote.connect(
                settings(server, database: "history", postgis: false), logger: testLogger)
            try await remote.send(readings.map(RemoteEntry.init) + events.map(RemoteEntry.init))
            await remote.close()
            // Another hub's rows in the same tables are not this hub's history.
            let other = try await PostgresRemote.connect(
                settings(server, database: "history", hub: "other", postgis: false), logger: testLogger)
            try await other.send(Array(readings.prefix(40)).map(RemoteEntry.init) + events.map(RemoteEntry.init))
            await other.close()

            let database = PostgresHistory(
                server: server.settings(database: "history"), hub: "home", applicationName: "test", logger: testLogger)
            defer { Task { await database.close() } }
            try await Self.expectSameAnswers(file, database)

            // Pruned alike: what is left is still the same.
            let cut = Self.at(20 * 86_400_000)
            let fromFile = try await file.prune(before: cut)
            let fromDatabase = try await database.prune(before: cut)
            #expect(fromFile == fromDatabase && fromFile > 100)
            try await Self.expectSameAnswers(file, database)
            #expect(
                try await server.count("SELECT count(*) FROM readings WHERE hub = 'other'", database: "history") == 40)
        }
    }

    static func expectSameAnswers(_ file: History, _ database: PostgresHistory) async throws {
        let since = at(0)
        for sensor in ["air", "temp", "walk", "nobody"] {
            let fileReadings = try await (file as any HistoryReader).readings(of: sensor, since: since)
            #expect(try await database.readings(of: sensor, since: since) == fileReadings, "\(sensor)")
            for period in History.Period.allCases {
                let expected = try await (file as any HistoryReader).aggregates(of: sensor, since: since, per: period)
                let found = try await database.aggregates(of: sensor, since: since, per: period)
                #expect(found.count == expected.count, "\(sensor) per \(period)")
                for (found, expected) in zip(found, expected) {
                    #expect(found.start == expected.start && found.count == expected.count, "\(sensor) \(period)")
                    #expect(Set(found.spreads.keys) == Set(expected.spreads.keys))
                    for (series, spread) in expected.spreads {
                        let other = try #require(found[series])
                        #expect(other.min == spread.min && other.max == spread.max)
                        #expect(abs(other.mean - spread.mean) <= 1e-9 * max(1, abs(spread.mean)))
                    }
                }
            }
        }
        let recent = at(10 * 86_400_000)
        for (sensor, time, limit) in [
            (nil, since, 10_000), ("door", since, 10_000), (nil, recent, 5), ("walk", since, 2),
        ] {
            let expected = try await (file as any HistoryReader).events(of: sensor, since: time, limit: limit)
            #expect(try await database.events(of: sensor, since: time, limit: limit) == expected)
            #expect(!expected.isEmpty)
        }
        for sensor in [nil, "walk", "air"] {
            let expected = try await (file as any HistoryReader).sessions(of: sensor, since: since, limit: 1000)
            #expect(try await database.sessions(of: sensor, since: since, limit: 1000) == expected)
        }
        #expect(try await database.sessions(of: nil, since: since, limit: 1).count == 1)
        for id in [session, openSession, "fixed:walk", "fixed:air", "fixed:nobody", "no-such-session"] {
            let expected = try await (file as any HistoryReader).session(id)
            #expect(try await database.session(id) == expected, "\(id)")
            for limit in [1_000_000, 3] {
                let track = try await (file as any HistoryReader).track(of: id, limit: limit)
                #expect(try await database.track(of: id, limit: limit) == track, "\(id)")
            }
        }
        let box = GeoBoundingBox(south: 1.29, west: 103.79, north: 1.32, east: 103.81)
        for (sensors, limit) in [(nil, 1000), (["walk"], 1000), (["air"], 1000), ([], 1000), (nil, 7)]
            as [([String]?, Int)]
        {
            let expected = try await (file as any HistoryReader).pollutionReadings(
                in: box, since: since, sensors: sensors, limit: limit)
            let found = try await database.pollutionReadings(in: box, since: since, sensors: sensors, limit: limit)
            #expect(found.matched == expected.matched)
            let key = { (reading: PollutionReading) in
                "\(reading.point.latitude),\(reading.point.longitude),\(reading.pm25)"
            }
            #expect(found.readings.map(key).sorted() == expected.readings.map(key).sorted())
        }
    }
}
