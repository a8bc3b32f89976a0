import Foundation
import HubCore
import HubSupport
import HubTestKit
import Logging
import Testing

@testable import HubAgent

/// The registry's writer on a real store and a real journal: statuses are written to the status log at once and
/// flushed (then acknowledged to the journal) every `syncInterval`, also when no status follows them.
@Suite struct StoreWriterTests {
    @Test func theLastStatusesAreFlushedAndAcknowledgedWhenNoMoreCome() async throws {
        let state = try TemporaryDirectory(prefix: "store-writer")
        var logger = Logger(label: "store-writer-test")
        logger.logLevel = .warning
        let store = DefaultsStore(directory: state.path)
        try store.update { document throws(RegistryError) in try document.addSensor(named: "door") }
        let journal = Journal(directory: state.path, logger: logger)
        _ = try journal.open()
        let writer = StoreWriter(
            store: FileRegistry(store), journal: journal, writes: Locked(0), followedVersion: Locked(nil),
            stateDirectory: state.path, flushInterval: .milliseconds(20), snapshot: { _ in HubSnapshot() },
            errors: ErrorRecorder(logger: logger), logger: logger,
            syncInterval: .milliseconds(500))
        journal.attach([(StoreWriter.consumerName, writer)])
        let running = Task { await writer.run() }
        defer { running.cancel() }

        let sensor = try #require(try store.read().sensor(named: "door"))
        journal.append([
            JournalRecord(
                topic: sensor.topic, sensorID: sensor.id, status: "open", lastUpdated: .now, sequence: 1, events: [])
        ])
        await journal.flushed()
        try await eventually("the status in the registry") { try store.read().sensor(named: "door")?.status == "open" }
        // Nothing more comes: the flush and the acknowledgement follow within the interval all the same (0.56 s
        // alone; a loaded machine stretches the writer's rest after a slow flush, ten times its length: the full
        // suite once took over 5 s). Without the timer they never come.
        try await eventually("the journal told", within: .seconds(20)) {
            journal.statistics.unacknowledged?[StoreWriter.consumerName] == 0
        }
    }
}
