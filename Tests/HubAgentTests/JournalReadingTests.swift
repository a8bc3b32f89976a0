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

    /// A line leaves out what its status says already (an event's topic, new status, time and id; the reading's
    /// time), and reads back whole; members that differ are written, and lines written whole before still read.
    @Test func aLineLeavesOutWhatItsStatusSaysAndReadsBackWhole() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let time = Timestamp(millisecondsSince1970: 1_765_000_000_123)
        let earlier = time.adding(milliseconds: -5_000)
        let changed = SensorEvent(
            id: SensorEvent.id(sensor: "0a1b2c3d4e5f", sequence: 7), kind: .changed, sensor: "door", topic: "t/7",
            oldStatus: "closed", newStatus: "open", time: time)
        // Nothing of it as the status has it.
        let other = SensorEvent(
            id: SensorEvent.randomID(), kind: .threshold, sensor: "door", topic: "elsewhere", oldStatus: "below",
            newStatus: "above", time: earlier, value: "21.5 °C")
        var door = JournalRecord(
            topic: "t/7", sensorID: "0a1b2c3d4e5f", status: "open", lastUpdated: time, sequence: 7,
            events: [changed, other])
        door.reading = RecordedReading(
            sensor: "door", reading: .numeric(1, unit: nil, time: time), sensorID: "0a1b2c3d4e5f")
        var late = record(
            RecordedReading(sensor: "t", reading: .numeric(2, unit: "°C", time: earlier), sensorID: "0a1b2c3d4e5f"),
            sequence: 8)
        late.events = [changed]  // its id, topic and status are not this record's
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        journal.attach([])
        journal.append([door, late])
        await journal.flushed()
        await journal.close()

        let lines = try String(contentsOfFile: directory + "/journal.jsonl", encoding: .utf8)
            .split(separator: "\n").filter { $0.contains("\"at\"") }
        try #require(lines.count == 2)
        let implied = String(lines[0])
        #expect(!implied.contains("\"ms\""))
        #expect(!implied.contains("0a1b2c3d4e5f-7"))
        #expect(implied.components(separatedBy: "\"topic\"").count == 3)  // the status's and the other event's
        #expect(implied.components(separatedBy: "\"newStatus\"").count == 2)  // the other event's
        #expect(implied.components(separatedBy: "\"time\"").count == 2)
        #expect(["\"ms\"", "0a1b2c3d4e5f-7", "\"newStatus\""].allSatisfy { lines[1].contains($0) })
        let replay = try Journal(directory: directory, logger: logger).open().records
        #expect(replay.map(\.events) == [door.events, late.events])
        #expect(replay.map(\.reading) == [door.reading, late.reading])

        // A line written whole, as before.
        let whole =
            #"{"at":9,"topic":"t/7","sensor":"0a1b2c3d4e5f","status":"open","#
            + #""updated":"2025-12-06T05:46:40.123Z","seq":7,"#
            + #""events":[{"id":"0a1b2c3d4e5f-7","kind":"changed","sensor":"door","topic":"t/7","oldStatus":"closed","#
            + #""newStatus":"open","time":"2025-12-06T05:46:40.123Z"}],"#
            + #""reading":{"name":"door","ms":1765000000123,"value":1}}"# + "\n"
        try Data(whole.utf8).write(to: URL(fileURLWithPath: directory + "/journal.jsonl"))
        let before = try Journal(directory: directory, logger: logger).open().records
        #expect(before.map(\.events) == [[changed]])
        #expect(before.map(\.reading) == [door.reading])
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
