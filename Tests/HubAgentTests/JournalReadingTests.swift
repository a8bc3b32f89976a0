import Foundation
import HubCore
import Logging
import Testing

@testable import HubAgent

/// A record's reading in the journal (issue 55): the history takes readings from there, so each kind comes back
/// from the file as it went in; and the numbering continues after the position a consumer's own file holds.
@Suite struct JournalReadingTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID())").path
    let logger = Logger(label: "test")

    func record(_ reading: RecordedReading?, sequence: Int) -> JournalRecord {
        var record = JournalRecord(
            topic: "t/\(sequence)", sensorID: "0a1b2c3d4e5f", status: "21.5",
            lastUpdated: Timestamp(millisecondsSince1970: 1_765_000_000_123), sequence: sequence, events: [])
        record.reading = reading
        return record
    }

    @Test func everyKindOfReadingComesBackFromTheFileAsItWentIn() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let time = Timestamp(millisecondsSince1970: 1_765_000_000_123)
        let fix = GeoFix(point: try #require(GeoPoint(latitude: 52.52, longitude: 13.405)), altitude: 34, accuracy: 4.5)
        let readings: [RecordedReading?] = [
            RecordedReading(
                sensor: "living room", reading: .numeric(21.25, unit: "°C", time: time), sensorID: "0a1b2c3d4e5f"),
            RecordedReading(
                sensor: "balcony \"air\"",
                reading: .particulate(ParticulateReading(pm25: 12.3, pm10: nil, time: time, device: "ab12")),
                sensorID: "0a1b2c3d4e5f"),
            RecordedReading(
                sensor: "bike", reading: .numeric(-3, unit: nil, time: time, position: fix), sensorID: "0a1b2c3d4e5f",
                session: "s-41"),
            nil,
        ]
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        journal.attach([])
        journal.append(readings.enumerated().map { record($1, sequence: $0 + 1) })
        await journal.flushed()
        await journal.close()

        let replay = try Journal(directory: directory, logger: logger).open()
        #expect(replay.records.map(\.reading) == readings)
    }

    @Test func recordsAreNumberedAfterAConsumersPosition() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        journal.continueNumbering(after: 41)
        journal.attach([])
        journal.append([record(nil, sequence: 1)])
        // Lower than a position already given: no effect.
        journal.continueNumbering(after: 3)
        journal.append([record(nil, sequence: 2)])
        await journal.flushed()
        await journal.close()
        #expect(try Journal(directory: directory, logger: logger).open().records.map(\.position) == [42, 43])
    }
}
