import Foundation
import HubCore
import HubHistory
import HubTestKit
import Logging
import Testing

@testable import HubAgent

/// The history's writer on a real journal and a real SQLite file: it commits every `history.commit_interval`, or at
/// once when `mostPending` rows wait, whatever the interval (issue 55: a long interval spares an SD card, and must not
/// hold a building's minute of rows in memory).
@Suite struct HistoryWriterTests {
    /// A writer committing hourly (or at `mostPending` rows) on a journal and a history in a new directory.
    static func writer(mostPending: Int = HistoryWriter.defaultMostPending) throws
        -> (TemporaryDirectory, Journal, History, HistoryWriter)
    {
        let state = try TemporaryDirectory(prefix: "history-writer")
        var logger = Logger(label: "history-writer-test")
        logger.logLevel = .warning
        let journal = Journal(directory: state.path, logger: logger)
        _ = try journal.open()
        let history = try History(directory: state.path)
        let writer = HistoryWriter(
            history: history, journal: journal, commitInterval: .seconds(3600), retention: { .seconds(86_400) },
            errors: ErrorRecorder(logger: logger), logger: logger, mostPending: mostPending)
        journal.attach([(HistoryWriter.consumerName, writer)])
        return (state, journal, history, writer)
    }

    @Test func aCommitComesAtOnceWhenEnoughRowsWait() async throws {
        let (state, journal, history, writer) = try Self.writer(mostPending: 50)
        defer { withExtendedLifetime(state) {} }
        let running = Task { await writer.run() }
        defer { running.cancel() }

        let base = Timestamp.now.millisecondsSince1970
        func records(_ range: Range<Int>) -> [JournalRecord] {
            range.map { index in
                let time = Timestamp(millisecondsSince1970: base + Int64(index))
                var record = JournalRecord(
                    topic: "cellar", sensorID: "0a1b2c3d4e5f", status: "\(index)", lastUpdated: time, sequence: 1,
                    events: [])
                record.reading = RecordedReading(
                    sensor: "cellar", reading: .numeric(Double(index), unit: nil, time: time),
                    sensorID: "0a1b2c3d4e5f")
                return record
            }
        }
        let since = Timestamp(millisecondsSince1970: base - 1)
        journal.append(records(0..<49))
        await journal.flushed()
        // 49 rows wait: not yet (the interval is an hour).
        try await Task.sleep(for: .milliseconds(300))
        #expect(try history.readings(of: "cellar", since: since).isEmpty)
        journal.append(records(49..<60))
        await journal.flushed()
        try await eventually("the 60 rows committed") { try history.readings(of: "cellar", since: since).count == 60 }
        #expect(try history.journalPosition() == 60)
    }

    /// hubd's readers (the API, the dashboard's charts) see the rows held for the next commit with the file's, and
    /// commit nothing: a dashboard redrawing its charts each minute made the history commit each minute. A question
    /// only the file answers (aggregates by month) has them committed first.
    @Test func hubdsReadersSeeTheHeldRowsWithoutACommit() async throws {
        let (state, journal, history, writer) = try Self.writer()
        defer { withExtendedLifetime(state) {} }
        let running = Task { await writer.run() }
        defer { running.cancel() }

        // Within this hour, a millisecond apart: the cellar at 0, 1, 2… and the door open, closed, open…
        let hour = Timestamp.now.millisecondsSince1970 / 3_600_000 * 3_600_000
        func records(_ range: Range<Int>) -> [JournalRecord] {
            range.flatMap { index in
                let time = Timestamp(millisecondsSince1970: hour + 1000 + Int64(index))
                var cellar = JournalRecord(
                    topic: "cellar", sensorID: "0a1b2c3d4e5f", status: "\(index)", lastUpdated: time, sequence: 1,
                    events: [])
                cellar.reading = RecordedReading(
                    sensor: "cellar", reading: .numeric(Double(index), unit: "°C", time: time), sensorID: "0a1b2c3d4e5f"
                )
                let status = index % 2 == 0 ? "open" : "closed"
                let event = SensorEvent(
                    id: SensorEvent.id(sensor: "5f4e3d2c1b0a", sequence: index + 1), kind: .changed, sensor: "door",
                    topic: "door", oldStatus: index % 2 == 0 ? "closed" : "open", newStatus: status, time: time)
                let door = JournalRecord(
                    topic: "door", sensorID: "5f4e3d2c1b0a", status: status, lastUpdated: time, sequence: index + 1,
                    events: [event])
                return [cellar, door]
            }
        }
        let since = Timestamp(millisecondsSince1970: hour)
        let reader = try HistorySource.file(directory: state.path, held: writer).openAll()
        journal.append(records(0..<10))
        await journal.flushed()
        // Held: read with the file's rows (none yet), nothing committed.
        #expect(
            try await reader.readings(of: "cellar", since: since).map(\.time.millisecondsSince1970)
                == (0..<10).map { hour + 1000 + Int64($0) })
        #expect(try await reader.events(of: "door", since: since, limit: 100).count == 10)
        #expect(
            try await reader.events(of: nil, since: since, limit: 4).map(\.newStatus) == [
                "open", "closed", "open", "closed",
            ])
        var hourly = try await reader.aggregates(of: "cellar", since: since, per: .hour)
        #expect(
            hourly.count == 1 && hourly.first?.count == 10 && hourly.first?.value == .init(min: 0, mean: 4.5, max: 9))
        #expect(try history.readings(of: "cellar", since: since).isEmpty && history.journalPosition() == 0)
        // Ten committed, ten more held: each once, the hour's spread over both.
        await writer.writePending()
        journal.append(records(10..<20))
        await journal.flushed()
        #expect(try history.readings(of: "cellar", since: since).count == 10)
        #expect(try await reader.readings(of: "cellar", since: since).count == 20)
        #expect(try await reader.events(of: "door", since: since, limit: 100).count == 20)
        hourly = try await reader.aggregates(of: "cellar", since: since, per: .hour)
        #expect(
            hourly.count == 1 && hourly.first?.count == 20 && hourly.first?.value == .init(min: 0, mean: 9.5, max: 19))
        #expect(try history.readings(of: "cellar", since: since).count == 10)
        // By month: committed first, then read from the file.
        let monthly = try await reader.aggregates(of: "cellar", since: since, per: .month)
        #expect(monthly.first?.count == 20)
        #expect(try history.readings(of: "cellar", since: since).count == 20)
        // The journal hands the last records over again (as after a crash): their events, held and in the file,
        // are read once.
        journal.append(records(15..<20))
        await journal.flushed()
        #expect(try await reader.events(of: "door", since: since, limit: 100).count == 20)
    }
}
