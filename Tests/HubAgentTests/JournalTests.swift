import Foundation
import HubCore
import HubSupport
import Logging
import Testing

@testable import HubAgent

/// The write-ahead journal on a real file: what it hands on, what it gives back after a crash, when it forgets.
@Suite struct JournalTests {
    final class Consumer: JournalConsumer, @unchecked Sendable {
        private let lock = NSLock()
        private var taken: [JournalRecord] = []
        private var through = 0
        func accept(_ records: [JournalRecord], through position: Int) {
            lock.withLock {
                taken += records
                through = position
            }
        }
        var records: [JournalRecord] { lock.withLock { taken } }
        var position: Int { lock.withLock { through } }
    }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID())").path
    let logger = Logger(label: "test")

    func record(_ topic: String, _ status: String, sequence: Int) -> JournalRecord {
        let event = SensorEvent(
            id: SensorEvent.id(sensor: "0a1b2c3d4e5f", sequence: sequence), kind: .changed, sensor: topic,
            topic: topic, oldStatus: "before \"quoted\"", newStatus: status, time: Timestamp(millisecondsSince1970: 5))
        return JournalRecord(
            topic: topic, sensorID: "0a1b2c3d4e5f", status: status, lastUpdated: Timestamp(millisecondsSince1970: 5),
            sequence: sequence, events: [event])
    }

    var fileSize: Int {
        ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + Journal.fileName))?[.size] as? Int) ?? -1
    }

    /// The file's blocks are allocated ahead of its appends, 256 KiB at a time, its size what was written: ext4
    /// allocating a block or two at each `fsync` wrote its bitmap and group descriptor again each time
    /// (`AppendFile.reserve`).
    @Test func theFilesBlocksAreAllocatedAheadOfItsLines() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        journal.attach([("store", Consumer())])
        journal.append([record("door", "open", sequence: 1)])
        await journal.flushed()
        var info = stat()
        #expect(stat(directory + "/" + Journal.fileName, &info) == 0)
        #expect(info.st_size > 0 && info.st_size < 4096, "the size is what was written: \(info.st_size)")
        #expect(Int(info.st_blocks) * 512 >= 1 << 18, "\(info.st_blocks) blocks of 512 bytes allocated")
        // Read back whole, the blocks beyond the end unseen.
        #expect(try Journal(directory: directory, logger: logger).open().records.map(\.status) == ["open"])
    }

    @Test func durableRecordsReachEveryConsumerAndComeBackUntilAcknowledged() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal(directory: directory, logger: logger)
        #expect(try journal.open().records.isEmpty)
        let (store, router) = (Consumer(), Consumer())
        journal.attach([("store", store), ("router", router)])
        journal.append([record("door", "open", sequence: 1)])
        journal.append([record("door", "closed", sequence: 2), record("window", "open", sequence: 1)])
        await journal.flushed()
        #expect(store.records.map(\.status) == ["open", "closed", "open"])
        #expect(router.records.map(\.position) == [1, 2, 3] && router.position == 3)
        #expect(journal.statistics.records == 3 && journal.statistics.commits >= 1)
        #expect(journal.statistics.unacknowledged == ["store": 3, "router": 3])
        journal.acknowledge("store", through: 3)
        journal.acknowledge("router", through: 1)
        await journal.flushed()
        #expect(journal.statistics.unacknowledged == ["store": 0, "router": 2])

        // A crash here: the next start reads every record, and the router gets back what it had not acknowledged.
        let again = Journal(directory: directory, logger: logger)
        let replay = try again.open()
        #expect(replay.records.map(\.status) == ["open", "closed", "open"])
        #expect(replay.records[1] == record("door", "closed", sequence: 2).positioned(2))
        #expect(replay.acknowledged == ["store": 3, "router": 1])
        // Everything read back is durable: nothing waits on it.
        let ran = Locked(false)
        again.afterCommit { ran.withLock { $0 = true } }
        #expect(ran.withLock { $0 })
        let (store2, router2) = (Consumer(), Consumer())
        again.attach([("store", store2), ("router", router2)])
        #expect(store2.records.isEmpty)
        #expect(router2.records.map(\.position) == [2, 3])
        #expect(again.statistics.unacknowledged == ["store": 0, "router": 2])
        again.append([record("door", "open", sequence: 3)])
        await again.flushed()
        #expect(router2.records.map(\.position) == [2, 3, 4])

        // Everything acknowledged: closing empties the file.
        again.acknowledge("store", through: 4)
        again.acknowledge("router", through: 4)
        await again.close()
        #expect(fileSize == 0)
        #expect(try Journal(directory: directory, logger: logger).open().records.isEmpty)
    }

    /// The router takes each batch of held messages once it is written, while the `fsync` runs (issue 38): the file
    /// holds it by then, and the broker is not yet told (its acknowledgements wait for the `fsync`). The others, and
    /// the router for records nothing would send again, take it after.
    @Test func theRouterTakesABatchOnceWrittenBeforeTheBrokerHearsOfIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        final class Early: JournalConsumer, Sendable {
            let path: String
            let confirmed = Locked(false)
            let seen = Locked<[(positions: [Int], inFile: Bool, confirmed: Bool)]>([])
            init(_ path: String) { self.path = path }
            var takesWrittenRecords: Bool { true }
            func accept(_ records: [JournalRecord], through position: Int) {
                let file = String(decoding: AppendFile.contents(path), as: UTF8.self)
                let inFile = records.allSatisfy { file.contains("\"status\":\"\($0.status)\"") }
                seen.withLock { $0.append((records.map(\.position), inFile, confirmed.withLock { $0 })) }
            }
        }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        let (store, router) = (Consumer(), Early(journal.path))
        journal.attach([("store", store), ("router", router)])
        journal.append([record("door", "open", sequence: 1)], delivery: Journal.Delivery(packet: 1, digest: 42))
        journal.afterCommit { router.confirmed.withLock { $0 = true } }
        await journal.flushed()
        var seen = router.seen.withLock { $0 }
        #expect(seen.count == 1 && seen[0].positions == [1] && seen[0].inFile && !seen[0].confirmed, "\(seen)")
        #expect(router.confirmed.withLock { $0 } && store.records.map(\.position) == [1])
        // A record no broker would send again after a power cut (a silence, QoS 0): the router takes it flushed.
        router.confirmed.withLock { $0 = false }
        journal.append([record("door", "offline", sequence: 2)])
        journal.afterCommit { router.confirmed.withLock { $0 = true } }
        await journal.flushed()
        seen = router.seen.withLock { $0 }
        #expect(seen.count == 2 && seen[1].positions == [2] && seen[1].confirmed, "\(seen)")
    }

    /// A shared `fsync` (`sensors.sync_delay`): bursts of held messages committed without syncing are written
    /// (a SIGKILL loses none, and their messages are known if the broker sends them again) and routed, while what
    /// waits for durability (the broker's acknowledgements, the registry) waits for the one `fsync` that covers them
    /// all. A record no held acknowledgement brings back is synced at once, and everything before it with it.
    @Test func oneFsyncCoversEveryBurstWrittenBeforeIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        final class Early: JournalConsumer, Sendable {
            let positions = Locked<[Int]>([])
            var takesWrittenRecords: Bool { true }
            func accept(_ records: [JournalRecord], through position: Int) {
                positions.withLock { $0 += records.map(\.position) }
            }
        }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        let (store, router) = (Consumer(), Early())
        journal.attach([("store", store), ("router", router)])
        let confirmed = Locked(0)
        for burst in 1...3 {
            journal.append(
                [record("door", "s\(burst)", sequence: burst)],
                delivery: Journal.Delivery(packet: burst, digest: UInt64(burst)), scheduling: false)
            #expect(!journal.commitNow(syncing: false))
            journal.afterCommit { confirmed.withLock { $0 = burst } }
        }
        #expect(router.positions.withLock { $0 } == [1, 2, 3])
        #expect(store.records.isEmpty && confirmed.withLock { $0 } == 0)
        #expect(journal.statistics.commits == 0)
        #expect(journal.wasApplied(Journal.Delivery(packet: 2, digest: 2)))
        // Killed here, a start reads all three and their messages' ids.
        let read = try Journal(directory: directory, logger: logger).open()
        #expect(read.records.map(\.status) == ["s1", "s2", "s3"])
        #expect(read.deliveries.contains(packet: 3, digest: 3))

        journal.syncNow()
        #expect(store.records.map(\.position) == [1, 2, 3] && confirmed.withLock { $0 } == 3)
        #expect(journal.statistics.commits == 1 && journal.statistics.records == 3)

        // Held, then not held: the second commit syncs both.
        journal.append(
            [record("door", "s4", sequence: 4)], delivery: Journal.Delivery(packet: 4, digest: 4), scheduling: false)
        #expect(!journal.commitNow(syncing: false))
        journal.append([record("door", "offline", sequence: 5)], scheduling: false)
        #expect(journal.commitNow(syncing: false))
        #expect(store.records.map(\.position) == [1, 2, 3, 4, 5])
        #expect(router.positions.withLock { $0 } == [1, 2, 3, 4, 5])
        #expect(journal.statistics.commits == 2)
        await journal.close()
    }

    @Test func aTornLastLineIsSkippedAndCounted() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        journal.attach([])
        journal.append([record("door", "open", sequence: 1)])
        await journal.flushed()
        let handle = try #require(FileHandle(forWritingAtPath: directory + "/" + Journal.fileName))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"at":2,"topic":"door","sens"#.utf8))
        try handle.close()
        let again = Journal(directory: directory, logger: logger)
        let replay = try again.open()
        #expect(replay.records.map(\.status) == ["open"] && replay.unreadable == 1)
        // The torn line is ended: the next record is a line of its own.
        again.attach([])
        again.append([record("door", "closed", sequence: 2)])
        await again.flushed()
        #expect(try Journal(directory: directory, logger: logger).open().records.map(\.status) == ["open", "closed"])
    }

    /// A consumer that falls behind (a registry that can't be written) keeps its records through a compaction;
    /// what every consumer has is dropped.
    @Test func compactionKeepsWhatAConsumerStillNeeds() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        let (store, router) = (Consumer(), Consumer())
        journal.attach([("store", store), ("router", router)])
        let count = 6000
        for sequence in 1...count { journal.append([record("door", "s\(sequence)", sequence: sequence)]) }
        await journal.flushed()
        #expect(fileSize > Journal.compactionThreshold)
        journal.acknowledge("router", through: count)
        journal.acknowledge("store", through: count - 10)
        await journal.flushed()
        #expect(fileSize < Journal.compactionThreshold / 10)
        let replay = try Journal(directory: directory, logger: logger).open()
        #expect(replay.records.map(\.sequence) == Array(count - 9...count))
        #expect(replay.acknowledged["router"] == count)
    }

    /// A rewrite waits for a consumer that still needs a good part of the file (the history, until its next commit)
    /// rather than copy that part: the file is left as it is while it holds more than an eighth of it, and emptied
    /// once it acknowledges; past four times the threshold, a rewrite keeps up to half, as a bound.
    @Test func aRewriteWaitsForAConsumerThatStillNeedsMuch() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        journal.attach([("store", Consumer()), ("history", Consumer())])
        var count = 0
        /// Appends records (none acknowledged: nothing is compacted) until the file is larger than `size`.
        func append(past size: Int) async -> Int {
            var added = 0
            while fileSize <= size {
                for _ in 0..<500 {
                    count += 1
                    journal.append([record("door", "s\(count)", sequence: count)])
                }
                added += 500
                await journal.flushed()
            }
            return added
        }
        var added = await append(past: Journal.compactionThreshold)
        let full = fileSize
        // The history holds a fifth of the file: not copied.
        journal.acknowledge("store", through: count)
        journal.acknowledge("history", through: count - added / 5)
        await journal.flushed()
        #expect(fileSize >= full, "rewritten to \(fileSize) of \(full) bytes")
        // It commits: the file is emptied.
        journal.acknowledge("history", through: count)
        await journal.flushed()
        #expect(fileSize < Journal.compactionThreshold / 10)
        // Past four times the threshold, a fifth is copied.
        added = await append(past: 4 * Journal.compactionThreshold)
        journal.acknowledge("store", through: count)
        journal.acknowledge("history", through: count - added / 5)
        await journal.flushed()
        #expect(fileSize < 2 * Journal.compactionThreshold)
        let replay = try Journal(directory: directory, logger: logger).open()
        #expect(replay.records.map(\.sequence) == Array(count - added / 5 + 1...count))
    }

    /// The packet ids of the messages applied come back after a crash and through compactions, so a message the
    /// broker sends again is known; a delivery that changed nothing is committed before it may be acknowledged; a
    /// session the broker made anew forgets them.
    @Test func appliedMessagesAreKnownAfterACrashAndACompaction() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func delivery(_ packet: Int, _ payload: String, anew: Bool = false) -> Journal.Delivery {
            Journal.Delivery(
                packet: packet, digest: RecentDeliveries.digest(topic: "door", payload: Array(payload.utf8)),
                sessionIsNew: anew)
        }
        let journal = Journal(directory: directory, logger: logger)
        _ = try journal.open()
        let store = Consumer()
        journal.attach([("store", store)])
        journal.append([record("door", "s1", sequence: 1)], delivery: delivery(7, "s1"))
        // Known while it is still pending, and only with its own payload.
        #expect(journal.wasApplied(delivery(7, "s1")) && !journal.wasApplied(delivery(7, "s2")))
        await journal.flushed()
        // An unchanged status: no record, but its id is committed before the acknowledgement.
        journal.append([], delivery: delivery(8, "s1"))
        let confirmed = Locked(false)
        journal.afterCommit { confirmed.withLock { $0 = true } }
        await journal.flushed()
        #expect(confirmed.withLock { $0 })

        // A crash: both are known to the next start; the first message of a new session is never a repeat.
        var again = Journal(directory: directory, logger: logger)
        #expect(try again.open().deliveries.digests.count == 2)
        #expect(again.wasApplied(delivery(7, "s1")) && again.wasApplied(delivery(8, "s1")))
        #expect(!again.wasApplied(delivery(9, "s1")) && !again.wasApplied(delivery(7, "s1", anew: true)))

        // Past the compaction threshold, everything acknowledged: the file is rewritten with the ids alone.
        again.attach([("store", store)])
        let count = 6000
        for sequence in 2...count {
            again.append(
                [record("door", "s\(sequence)", sequence: sequence)], delivery: delivery(sequence + 7, "s\(sequence)"))
        }
        await again.flushed()
        again.acknowledge("store", through: count)
        await again.flushed()
        #expect(fileSize < Journal.compactionThreshold / 4)
        again = Journal(directory: directory, logger: logger)
        let replay = try again.open()
        #expect(replay.records.isEmpty)
        #expect(replay.deliveries.digests.count == RecentDeliveries.span + 1)
        #expect(again.wasApplied(delivery(count + 7, "s\(count)")))
        #expect(!again.wasApplied(delivery(8, "s1")), "more than 4,096 behind the newest: forgotten")

        // A new session: its first message forgets the ids of the last one, durably.
        again.attach([("store", store)])
        again.append([], delivery: delivery(1, "s1", anew: true))
        #expect(!again.wasApplied(delivery(count + 7, "s\(count)")))
        await again.close()
        let last = Journal(directory: directory, logger: logger)
        #expect(try last.open().deliveries.digests.count == 1)
        #expect(last.wasApplied(delivery(1, "s1")) && !last.wasApplied(delivery(count + 7, "s\(count)")))
    }

    /// What a compaction would keep is counted as records come and are acknowledged (the compaction's test above
    /// relies on it: a count that never went down would never compact).
    @Test func retainedLinesCountTheirBytes() {
        var retained = RetainedLines()
        retained.append(1, Array("ab".utf8))
        retained.append(2, Array("cde".utf8))
        retained.append(3, [])
        #expect(retained.byteCount == 3 + 4 + 1)
        retained.drop(through: 2)
        #expect(retained.byteCount == 1)
        #expect(retained.map(\.position) == [3])
        retained.drop(through: 3)
        #expect(retained.isEmpty && retained.byteCount == 0)
    }
}

extension JournalRecord {
    func positioned(_ position: Int) -> JournalRecord {
        var record = self
        record.position = position
        return record
    }
}
