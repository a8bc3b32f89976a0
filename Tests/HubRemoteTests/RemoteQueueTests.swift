import Foundation
import HubCore
import HubRemote
import HubTestKit
import Testing

/// The queue's logic (what may go now) and its file (durable, torn lines skipped and counted), without a database.
@Suite struct RemoteQueueTests {
    @Test func streamModeSendsEverythingInArrivalOrder() {
        var backlog = RemoteBacklog(mode: .stream)
        let entries = [
            Make.session(start: true, sequence: 1, session: "0123456789ab-1", at: 0),
            Make.mobile(1, session: "0123456789ab-1"), Make.fixed(1), Make.change(2, to: "open"),
        ]
        for entry in entries {
            let added = backlog.add(entry)
            #expect(added)
        }
        let again = backlog.add(entries[1])
        #expect(!again)
        #expect(backlog.nextBatch(limit: 10) == entries)
        #expect(backlog.nextBatch(limit: 2) == Array(entries.prefix(2)))
        #expect(backlog.heldCount == 0)
        backlog.remove(entries.prefix(2).map(\.key))
        #expect(backlog.nextBatch(limit: 10) == Array(entries.dropFirst(2)))
    }

    @Test func recordModeHoldsASessionUntilItsEnd() {
        var backlog = RemoteBacklog(mode: .record)
        let session = "0123456789ab-1"
        let start = Make.session(start: true, sequence: 1, session: session, at: 0)
        let readings = (1...3).map { Make.mobile($0, session: session) }
        let fixed = Make.fixed(1)
        let door = Make.change(2, to: "open")
        // The tracker's first reading may come before the start event, which waits for the journal's fsync.
        backlog.add(readings[0])
        backlog.add(start)
        backlog.add(fixed)
        backlog.add(readings[1])
        backlog.add(door)
        backlog.add(readings[2])
        #expect(backlog.nextBatch(limit: 10) == [fixed, door])
        #expect(backlog.heldCount == 4)
        backlog.remove([fixed.key, door.key])
        let end = Make.session(start: false, sequence: 2, session: session, at: 4)
        backlog.add(end)
        #expect(backlog.heldCount == 0)
        #expect(backlog.nextBatch(limit: 10) == [readings[0], start, readings[1], readings[2], end])
        // Another session stays held.
        backlog.add(Make.mobile(9, session: "0123456789ab-7"))
        #expect(backlog.heldCount == 1)
    }

    @Test func whatWaitsSurvivesAReopenAndDoneStaysDone() async throws {
        let directory = try TemporaryDirectory(prefix: "remote-queue")
        let queue = RemoteQueue(directory: directory.path, mode: .record)
        try await queue.open()
        let session = "0123456789ab-1"
        let entries = [Make.fixed(1), Make.mobile(1, session: session), Make.change(2, to: "open")]
        #expect(try await queue.append(entries) == 3)
        #expect(try await queue.append([entries[0]]) == 0)
        await queue.markDone([entries[0].key])
        await queue.close()

        let again = RemoteQueue(directory: directory.path, mode: .record)
        #expect(try await again.open() == 2)
        #expect(again.heldCount == 1)
        #expect(again.nextBatch(limit: 10) == [entries[2]])
        // The journal hands an event over again after a crash: it is in the file already.
        #expect(try await again.append([entries[0], entries[2]]) == 0)
        #expect(again.unreadableLines == 0)
    }

    @Test func aTornLastLineIsSkippedAndCounted() async throws {
        let directory = try TemporaryDirectory(prefix: "remote-queue")
        let queue = RemoteQueue(directory: directory.path, mode: .stream)
        try await queue.open()
        try await queue.append([Make.fixed(1), Make.fixed(2)])
        await queue.close()
        // A crash in the middle of a write: half a line at the end.
        let handle = try #require(FileHandle(forWritingAtPath: queue.path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"add":{"reading":{"sensor":"kitchen","sens"#.utf8))
        try handle.close()

        let again = RemoteQueue(directory: directory.path, mode: .stream)
        #expect(try await again.open() == 2)
        #expect(again.unreadableLines == 1)
        // The next append starts a line of its own, and a later open reads it.
        try await again.append([Make.fixed(3)])
        await again.close()
        let third = RemoteQueue(directory: directory.path, mode: .stream)
        #expect(try await third.open() == 3)
        #expect(third.unreadableLines == 1)
    }

    @Test func compactionKeepsWhatWaitsAndTheEndedSessions() async throws {
        let directory = try TemporaryDirectory(prefix: "remote-queue")
        let queue = RemoteQueue(directory: directory.path, mode: .record)
        try await queue.open()
        let session = "0123456789ab-1"
        let sent =
            [Make.session(start: true, sequence: 1, session: session, at: 0)]
            + (1...1_200).map { Make.mobile($0, session: session) }
            + [Make.session(start: false, sequence: 2, session: session, at: 1_201)]
        try await queue.append(sent)
        let waiting = Make.fixed(1)
        try await queue.append([waiting])
        await queue.markDone(sent.map(\.key))
        await queue.close()
        let size = try FileManager.default.attributesOfItem(atPath: queue.path)[.size] as? Int ?? 0
        #expect(size < 2_000)

        // A late reading of the ended session is not held after the reopen: the file remembers that it ended.
        let again = RemoteQueue(directory: directory.path, mode: .record)
        #expect(try await again.open() == 1)
        let late = Make.mobile(1_300, session: session)
        try await again.append([late])
        #expect(again.nextBatch(limit: 10) == [waiting, late])
    }

    @Test func entriesKnowTheirKeySessionAndSensor() {
        let start = Make.session(start: true, sequence: 12, session: "0123456789ab-12", at: 0)
        #expect(start.key == "e/0123456789ab-12" && start.session == "0123456789ab-12" && !start.endsSession)
        #expect(start.event?.sensorID == "0123456789ab" && start.event?.isSessionStart == true)
        let end = Make.session(start: false, sequence: 13, session: "0123456789ab-12", at: 5)
        #expect(end.endsSession && end.session == "0123456789ab-12")
        // A start without a value is its own session.
        var bare = start.event!
        bare.value = nil
        #expect(bare.sessionID == bare.id)
        #expect(Make.mobile(3, session: "s").key == "r/0123456789ab/\(Make.base + 3000)")
        #expect(Make.change(1, to: "open").session == nil)
        let test = SensorEvent(
            id: "6f1c0e4a-2b7d-4c1e-9a3f-5d8e7c6b4a2f", kind: .test, sensor: "x", topic: "x", oldStatus: "",
            newStatus: "", time: .now)
        #expect(test.sensorID == nil)
    }

    @Test func backOffDoublesAndIsCapped() {
        #expect(RemoteForwarder.backOff(afterFailures: 0, maximum: .seconds(300)) == .zero)
        #expect(RemoteForwarder.backOff(afterFailures: 1, maximum: .seconds(300)) == .seconds(1))
        #expect(RemoteForwarder.backOff(afterFailures: 4, maximum: .seconds(300)) == .seconds(8))
        #expect(RemoteForwarder.backOff(afterFailures: 12, maximum: .seconds(300)) == .seconds(300))
        #expect(RemoteForwarder.backOff(afterFailures: 500, maximum: .seconds(300)) == .seconds(300))
    }
}
