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
    @Test func aCommitComesAtOnceWhenEnoughRowsWait() async throws {
        let state = try TemporaryDirectory(prefix: "history-writer")
        var logger = Logger(label: "history-writer-test")
        logger.logLevel = .warning
        let journal = Journal(directory: state.path, logger: logger)
        _ = try journal.open()
        let history = try History(directory: state.path)
        let writer = HistoryWriter(
            history: history, journal: journal, commitInterval: .seconds(3600), retention: { .seconds(86_400) },
            errors: ErrorRecorder(logger: logger), logger: logger, mostPending: 50)
        journal.attach([(HistoryWriter.consumerName, writer)])
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
}
