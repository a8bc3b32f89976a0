import Foundation
import HubCore
import HubNotify
import Logging
import Testing

@testable import HubAgent

/// The outbox's lines in the journal's file (issue 54: one log): what is pending comes back after a crash, what is
/// done goes at the next compaction, and an older hubd's `outbox.jsonl` is taken in once.
@Suite struct JournalOutboxTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-outbox-\(UUID())").path
    let logger = Logger(label: "test")

    func notification(_ sensor: String) -> HubNotify.Notification {
        let time = Timestamp(millisecondsSince1970: 1_795_000_000_123)
        return HubNotify.Notification(
            id: "id-\(sensor)", backend: "hook", rule: "all",
            event: SensorEvent(
                id: SensorEvent.id(sensor: "0a1b2c3d4e5f", sequence: sensor.count), kind: .changed, sensor: sensor,
                topic: "home/\(sensor)", oldStatus: "closed", newStatus: "open", time: time),
            title: "\(sensor) is open", body: "\(sensor): closed → open", priority: 3, created: time)
    }

    var journalLines: [String] {
        String(decoding: AppendFile.contents(directory + "/" + Journal.fileName), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    /// A journal opened on the directory (a restart), with an outbox in it.
    func reopen() async throws -> (Journal, Outbox, [String]) {
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        let outbox = Outbox(directory: directory, log: journal)
        let pending = try await outbox.open().map(\.event.sensor)
        return (journal, outbox, pending)
    }

    @Test func pendingNotificationsLiveInTheJournalAndOnlyThoseSurviveItsCompaction() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (journal, outbox, none) = try await reopen()
        #expect(none.isEmpty)
        try outbox.append(["door", "window", "gate"].map(notification), durable: false)
        try await outbox.sync()
        await outbox.markDone([notification("door").key])
        #expect(!FileManager.default.fileExists(atPath: directory + "/" + OutboxFile.fileName), "no file of its own")
        #expect(journalLines.count == 4, "three adds and a done mark: \(journalLines)")

        // A SIGKILL: the next start finds what was pending.
        var (again, reopened, pending) = try await reopen()
        #expect(pending == ["window", "gate"])
        // The compaction at a clean stop keeps the pending adds only.
        await reopened.markDone([notification("window").key])
        await reopened.close()
        await again.close()
        #expect(journalLines.count == 1 && journalLines[0].contains("\"gate\""), "\(journalLines)")
        (again, reopened, pending) = try await reopen()
        #expect(pending == ["gate"])

        // Compacted before the outbox opened (it opens once the router starts): its lines are kept as they were.
        await reopened.close()
        await again.close()
        let early = Journal(directory: directory, logger: logger)
        _ = try early.open()
        await early.close()
        (again, reopened, pending) = try await reopen()
        #expect(pending == ["gate"])

        // Delivered too: the journal empties at the next stop.
        await reopened.markDone([notification("gate").key])
        await reopened.close()
        await again.close()
        #expect(journalLines.isEmpty)
        _ = journal
    }

    /// The router writes a burst's notifications right after its records, before the journal's `fsync`: that `fsync`
    /// covers them, and the outbox's own `sync` a second later has nothing left to flush — unless adds came after.
    @Test func theJournalsFsyncCoversTheNotificationsWrittenBeforeIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (journal, outbox, _) = try await reopen()
        journal.attach([])
        var flushes: Int { journal.state.withLock { $0.flushes } }
        // As ingest and the router do it, on one thread: the records, then the notifications, then the commit.
        journal.append([JournalTests().record("door", "open", sequence: 1)], scheduling: false)
        try outbox.append([notification("door")], durable: false)
        journal.commitNow()
        let afterCommit = flushes
        #expect(afterCommit == 1)
        // Done marks need no `fsync`: still nothing to flush.
        await outbox.markDone([notification("door").key])
        try await outbox.sync()
        #expect(flushes == afterCommit)
        // An add with no journal commit after it (an alert book's timer routed it): the outbox's sync flushes it.
        try outbox.append([notification("gate")], durable: false)
        try await outbox.sync()
        #expect(flushes == afterCommit + 1)

        // Ingest put the `fsync` off (held acknowledgements, `sync_delay`): the outbox's sync waits for it and makes
        // none of its own.
        journal.append(
            [JournalTests().record("window", "open", sequence: 2)], delivery: Journal.Delivery(packet: 7, digest: 42),
            scheduling: false)
        try outbox.append([notification("window")], durable: false)
        #expect(!journal.commitNow(syncing: false))
        let before = flushes
        let synced = Task { try await outbox.sync() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(flushes == before, "the outbox waits for the journal's fsync")
        journal.syncNow()
        try await synced.value
        #expect(flushes == before + 1)
        await outbox.close()
        await journal.close()
    }

    @Test func anOlderHubsOutboxFileIsTakenInOnceAndRemoved() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // What an older hubd left: two pending, one done.
        let old = Outbox(directory: directory)
        _ = try await old.open()
        try old.append(["door", "window", "gate"].map(notification))
        await old.markDone([notification("window").key])
        await old.close()
        #expect(FileManager.default.fileExists(atPath: directory + "/" + OutboxFile.fileName))

        var (journal, outbox, pending) = try await reopen()
        #expect(pending == ["door", "gate"])
        #expect(!FileManager.default.fileExists(atPath: directory + "/" + OutboxFile.fileName))
        #expect(journalLines.filter { $0.hasPrefix("{\"add\":") }.count == 2)
        await outbox.close()
        await journal.close()

        // Taken in once: the next start finds the same two, each once.
        (journal, outbox, pending) = try await reopen()
        #expect(pending == ["door", "gate"])
        await outbox.close()
        await journal.close()
    }
}
