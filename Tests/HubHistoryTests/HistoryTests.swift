import Foundation
import GRDB
import HubCore
import HubHistory
import HubTestKit
import Testing

/// The history on a real SQLite file in a temporary directory: numeric sensors' readings beside particulate ones, and
/// a database an older hubd left, migrated in place.
@Suite struct HistoryTests {
    /// 2026-11-02, a Monday, 00:00 UTC.
    let base = Timestamp(iso8601: "2026-11-02T00:00:00Z")!.millisecondsSince1970

    func time(hour: Int, minute: Int = 0) -> Timestamp {
        Timestamp(millisecondsSince1970: base + Int64(hour * 3_600_000 + minute * 60_000))
    }

    @Test func numericReadingsAreRecordedReadAggregatedAndPruned() async throws {
        let directory = try TemporaryDirectory()
        let history = try History(directory: directory.path)
        var readings: [RecordedReading] = []
        // Two days of a thermometer: h °C on the hour, h + 1 at half past; and a particulate sensor beside it.
        for hour in 0..<48 {
            readings.append(
                RecordedReading(
                    sensor: "living room", reading: .numeric(Double(hour), unit: "°C", time: time(hour: hour))))
            readings.append(
                RecordedReading(
                    sensor: "living room",
                    reading: .numeric(Double(hour + 1), unit: "°C", time: time(hour: hour, minute: 30))))
        }
        readings.append(
            RecordedReading(
                sensor: "air", reading: .particulate(ParticulateReading(pm25: 12, pm10: 20, time: time(hour: 1)))))
        let event = SensorEvent(
            id: SensorEvent.randomID(), kind: .offline, sensor: "living room", topic: "zigbee2mqtt/living_room",
            oldStatus: "21.5", newStatus: "offline", time: time(hour: 47))
        // Readings of both kinds and an event: one transaction.
        try await history.record(readings: readings, events: [event])

        let reader = try History(directory: directory.path, create: false)
        let since = Timestamp(millisecondsSince1970: base)
        let raw = try reader.readings(of: "living room", since: since)
        #expect(raw.count == 96)
        #expect(raw.prefix(3).map(\.number) == [0, 1, 1])
        #expect(raw.allSatisfy { $0.particulate == nil })
        // The unit is the registry's, not a row's.
        #expect(raw.first == .numeric(0, unit: nil, time: time(hour: 0)))
        #expect(try reader.readings(of: "air", since: since).map(\.particulate?.pm25) == [12])

        let hours = try reader.aggregates(of: "living room", since: since, per: .hour)
        #expect(hours.count == 48)
        #expect(hours[5].count == 2 && hours[5].value == History.Spread(min: 5, mean: 5.5, max: 6))
        #expect(hours[5].pm25 == nil && hours[5].pm10 == nil)
        let days = try reader.aggregates(of: "living room", since: since, per: .day)
        #expect(days.map(\.count) == [48, 48])
        #expect(days[0].value == History.Spread(min: 0, mean: 12, max: 24))
        #expect(days[1].value == History.Spread(min: 24, mean: 36, max: 48))
        #expect(days[1].start == time(hour: 24))
        let air = try reader.aggregates(of: "air", since: since, per: .day)
        #expect(air.count == 1 && air[0].value == nil && air[0][.pm25]?.max == 12)
        #expect(try reader.events(of: "living room", since: since).map(\.newStatus) == ["offline"])

        // The first day goes, readings of both kinds alike; the event (hour 47) stays.
        let removed = try await history.prune(before: time(hour: 24))
        #expect(removed == 48 + 1)
        #expect(try reader.readings(of: "living room", since: since).first?.number == 24)
        #expect(try reader.readings(of: "air", since: since).isEmpty)
        #expect(try reader.events(of: nil, since: since).count == 1)
    }

    /// A history.sqlite as hubd left it before numeric readings (migrations v1 to v3): read as it is by a reader that
    /// can't migrate it, then migrated in place by the next hubd, its rows kept.
    @Test func anOldDatabaseMigratesInPlace() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file(History.fileName)
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1'), ('v2'), ('v3');
                    CREATE TABLE readings (sensor TEXT NOT NULL, time INTEGER NOT NULL, pm25 REAL, pm10 REAL);
                    CREATE INDEX readings_by_sensor ON readings(sensor, time);
                    CREATE TABLE events (sensor TEXT NOT NULL, time INTEGER NOT NULL, kind TEXT NOT NULL, old TEXT NOT NULL,
                        new TEXT NOT NULL, value TEXT, topic TEXT NOT NULL DEFAULT '', id TEXT);
                    CREATE INDEX events_by_sensor ON events(sensor, time);
                    CREATE INDEX events_by_time ON events(time);
                    CREATE UNIQUE INDEX events_by_id ON events(id);
                    """)
            try db.execute(sql: "INSERT INTO readings VALUES ('air', ?, 27.4, 40)", arguments: [base])
            try db.execute(
                sql: "INSERT INTO events VALUES ('door', ?, 'changed', 'closed', 'open', NULL, 'home/door', 'a1-1')",
                arguments: [base])
        }
        try old.close()
        let since = Timestamp(millisecondsSince1970: base)

        // hubctl before hubd restarted: read-only, the file as it is.
        let before = try History(directory: directory.path, create: false)
        #expect(try before.readings(of: "air", since: since).map(\.particulate?.pm25) == [27.4])
        #expect(try before.aggregates(of: "air", since: since, per: .day).first?.value == nil)
        // No positions before v5: a route finds no readings rather than failing.
        let world = GeoBoundingBox(south: -90, west: -180, north: 90, east: 180)
        #expect(try before.pollutionReadings(in: world, since: since).readings.isEmpty)

        let history = try History(directory: directory.path)
        try await history.record(
            readings: [
                RecordedReading(sensor: "living room", reading: .numeric(21.5, unit: "°C", time: time(hour: 1)))
            ], events: [])
        let after = try History(directory: directory.path, create: false)
        #expect(
            try after.readings(of: "air", since: since) == [
                .particulate(ParticulateReading(pm25: 27.4, pm10: 40, time: since))
            ])
        #expect(try after.readings(of: "living room", since: since) == [.numeric(21.5, unit: nil, time: time(hour: 1))])
        #expect(try after.aggregates(of: "living room", since: since, per: .month).first?.value?.mean == 21.5)
        #expect(try after.events(of: "door", since: since).map(\.id) == ["a1-1"])

        let check = try DatabaseQueue(path: path)
        let (columns, migrations) = try await check.read { db in
            (
                try db.columns(in: "readings").map(\.name),
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
            )
        }
        try check.close()
        #expect(columns == ["sensor", "time", "pm25", "pm10", "value", "session", "lat", "lon", "alt", "accuracy"])
        #expect(migrations == ["v1", "v2", "v3", "v4", "v5", "v6", "v7"])
        // Opened again: nothing left to migrate, nothing lost.
        _ = try History(directory: directory.path)
        #expect(try after.readings(of: "air", since: since).count == 1)
    }
}

/// What the journal hands over again after a crash: an event the file has is one row, by id (without an index of its
/// own, issue 55); the journal position the rows reach is kept with them.
@Suite struct HistoryReplayTests {
    @Test func anEventWrittenTwiceIsOneRowAndThePositionIsKept() async throws {
        let directory = try TemporaryDirectory()
        let history = try History(directory: directory.path)
        #expect(try history.journalPosition() == 0)
        let time = Timestamp(millisecondsSince1970: 1_765_000_000_000)
        func event(_ sequence: Int, _ status: String, at time: Timestamp = time) -> SensorEvent {
            SensorEvent(
                id: SensorEvent.id(sensor: "0a1b2c3d4e5f", sequence: sequence), kind: .changed, sensor: "door",
                topic: "door", oldStatus: "closed", newStatus: status, time: time)
        }
        try await history.record(readings: [], events: [event(1, "open"), event(2, "closed")], through: 7)
        // Handed over again with the next one; and another sensor's event at the same instant.
        var other = event(1, "open")
        other.id = SensorEvent.id(sensor: "ffeeddccbbaa", sequence: 1)
        try await history.record(
            readings: [],
            events: [event(1, "open"), event(2, "closed"), event(3, "open", at: time.adding(milliseconds: 5)), other],
            through: 9)
        let since = Timestamp(millisecondsSince1970: 0)
        #expect(
            try history.events(of: nil, since: since).map(\.id).sorted()
                == [
                    event(1, "open").id, event(2, "closed").id, event(3, "open").id, other.id,
                ].sorted())
        #expect(try history.journalPosition() == 9)
        #expect(try History(directory: directory.path).journalPosition() == 9)
    }
}
