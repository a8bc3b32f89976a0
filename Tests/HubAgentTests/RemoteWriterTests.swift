import Foundation
import HubCore
import HubSupport
import HubTestKit
import Logging
import Testing

@testable import HubAgent

/// hubd's remote writer between a real journal and a real PostgreSQL, in `record` mode: a mobile session's
/// readings (from ingest) and its start and end (from the journal) reach the database only once it ended, a door's
/// change at once, and the journal hears that the remote has its records only once they are in the queue on disk.
@Suite struct RemoteWriterTests {
    let sensorID = "0123456789ab"

    func record(_ event: SensorEvent, status: String, sequence: Int) -> JournalRecord {
        JournalRecord(
            topic: event.topic, sensorID: event.id.components(separatedBy: "-")[0], status: status,
            lastUpdated: event.time, sequence: sequence, events: [event])
    }

    func session(start: Bool, sequence: Int, at time: Int64) -> SensorEvent {
        SensorEvent(
            id: SensorEvent.id(sensor: sensorID, sequence: sequence), kind: .session, sensor: "walk",
            topic: "walk", oldStatus: start ? "idle" : "recording", newStatus: start ? "recording" : "idle",
            time: Timestamp(millisecondsSince1970: time), value: "\(sensorID)-1")
    }

    func reading(_ index: Int, at base: Int64) -> RecordedReading {
        let fix = GeoFix(point: GeoPoint(latitude: 1.3, longitude: 103.8 + Double(index) * 0.001)!)
        return RecordedReading(
            sensor: "walk",
            reading: .particulate(
                ParticulateReading(
                    pm25: Double(index), pm10: nil, time: Timestamp(millisecondsSince1970: base + Int64(index) * 1000),
                    position: fix)),
            sensorID: sensorID, session: "\(sensorID)-1")
    }

    @Test func recordModeThroughTheJournalAndIngest() async throws {
        try await withPostgres { server in
            try await server.createDatabase("writer")
            let state = try TemporaryDirectory(prefix: "remote-writer")
            var logger = Logger(label: "remote-writer-test")
            logger.logLevel = .warning
            let journal = Journal(directory: state.path, logger: logger)
            _ = try journal.open()
            var settings = RemoteSettings(server: server.settings(database: "writer"), hub: "writer")
            settings.mode = .record
            settings.interval = .milliseconds(50)
            let writer = RemoteWriter(
                settings: settings, stateDirectory: state.path, journal: journal, errors: ErrorRecorder(logger: logger),
                logger: logger)
            journal.attach([(writer.name, writer)])
            let running = Task { await writer.run() }

            let base: Int64 = 1_795_000_000_000
            journal.append([record(session(start: true, sequence: 1, at: base), status: "recording", sequence: 1)])
            for index in 1...20 { writer.accept(reading(index, at: base)) }
            let door = SensorEvent(
                id: "d00d00d00d00-4", kind: .changed, sensor: "door", topic: "door", oldStatus: "closed",
                newStatus: "open", time: Timestamp(millisecondsSince1970: base))
            journal.append([record(door, status: "open", sequence: 4)])
            try await eventually("the door's change in PostgreSQL", within: .seconds(20)) {
                (try? await server.count("SELECT count(*) FROM events", database: "writer")) == 1
            }
            try await eventually("the session held") { writer.forwarder.statistics.held == 21 }
            #expect(try await server.count("SELECT count(*) FROM readings", database: "writer") == 0)
            // The journal knows the remote has both records (in its queue), before any of the session is sent.
            await journal.flushed()
            try await eventually("the journal acknowledged") {
                jsonLines(journal.path).compactMap { $0["ack"] as? String == "remote" ? $0["through"] as? Int : nil }
                    .max() == 2
            }

            journal.append([record(session(start: false, sequence: 2, at: base + 21_000), status: "idle", sequence: 2)])
            try await eventually("the session in PostgreSQL", within: .seconds(20)) {
                (try? await server.count("SELECT count(*) FROM readings", database: "writer")) == 20
            }
            #expect(
                try await server.psql(
                    "SELECT id, extract(epoch FROM ended - started)::int FROM sessions", database: "writer")
                    == "\(sensorID)-1|21")
            #expect(try await server.count("SELECT count(*) FROM events", database: "writer") == 3)
            running.cancel()
            await running.value
            #expect(writer.forwarder.statistics.queued == 0)
        }
    }
}
