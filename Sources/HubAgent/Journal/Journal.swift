import DequeModule
import Foundation
import HubCore
import HubSupport
import Logging
import ServiceLifecycle

/// The write-ahead journal: every status hubd applies is written here with the events it caused, and flushed to
/// disk, before the registry, the router or the history sees either. After a crash, hubd replays it at start: the
/// registry gets the statuses it had not written yet, the router and the history the events they had not made
/// durable yet. Event ids come from the sensor and its sequence, so an event replayed, or derived again from a
/// message the broker sends again, is the same event, never a second one.
///
/// The file (`journal.jsonl` in the state directory) is JSON lines: records (`{"at":…,"topic":…,"status":…,
/// "seq":…,"events":[…]}`), acknowledgements (`{"ack":"router","through":41}`), which say up to where a
/// consumer has made the records durable itself, and the packet ids of the messages applied
/// (`{"delivered":[812,813],"digests":["9f…","2c…"]}`, `"anew":true` when the broker's session was new): a message
/// the broker sends again after a crash is known by them and not applied twice (`RecentDeliveries`).
///
/// **Group commit.** One `write` and one `fsync` take everything appended since the last commit, on the pipeline's
/// executor (a serial queue, never a cooperative thread): MQTT ingest commits each burst it read on the network
/// thread (`commitNow`), other producers' appends schedule a commit. While one batch is flushed the next gathers,
/// so a record waits about one `fsync`, however high the rate (`AgentStatus.JournalCounters.longestWait`).
/// Acknowledgements are written without `fsync`: losing one only makes a replay hand records over again.
///
/// **Compaction.** Once the file is larger than `compactionThreshold`, it is emptied when every consumer has
/// acknowledged everything, and otherwise rewritten (temporary file, `fsync`, `rename`) with only the records some
/// consumer still needs.
public final class Journal: Sendable {
    public static let fileName = "journal.jsonl"
    /// The file is compacted once it is larger than this.
    package static let compactionThreshold = 1 << 20

    public let path: String
    private let directory: String
    let logger: Logger
    /// Where commits run: the pipeline's executor, which the router shares in a hub on its own, so a batch is routed
    /// on the thread that wrote it.
    private let queue: DispatchQueue
    /// Internal for its extensions in other files (`Journal+Deliveries.swift`).
    let state = Locked(State())
    private let failures = Locked(LogThrottle())

    struct State {
        var fd: Int32 = -1
        var nextPosition = 1
        var pending: [JournalRecord] = []
        /// When the oldest pending record arrived.
        var oldestPending: ContinuousClock.Instant?
        var commitScheduled = false
        /// The last position written and flushed (or handed on after a failed write).
        var durable = 0
        /// What waits for an append to be durable, in order (`appended` when it was asked).
        var waiting = Deque<(append: Int, action: @Sendable () -> Void)>()
        var acknowledgementsScheduled = false
        var consumers: [(name: String, consumer: any JournalConsumer)] = []
        var acknowledged: [String: Int] = [:]
        var acknowledgementsWritten: [String: Int] = [:]
        var retained = RetainedLines()
        /// An acknowledgement dropped a megabyte or more of retained lines: worth handing memory back.
        var trimWanted = false
        /// Bytes in the file.
        var size = 0
        var replay: [JournalRecord] = []
        /// The packet ids of the messages whose changes are in the file (committed).
        var deliveries = RecentDeliveries()
        /// Those appended since the last commit, and whether the broker's session was new before them.
        var pendingDeliveries: [(packet: Int, digest: UInt64)] = []
        var pendingAnew = false
        /// Some pending record came with no held acknowledgement (`append(_:delivery: nil)`).
        var pendingUnheld = false
        /// Those taken by the commit under way, until its write is done and they are in `deliveries`: a message
        /// sent again in that window is still known.
        var committingDeliveries: [(packet: Int, digest: UInt64)] = []
        var committingAnew = false
        /// Counts the appends (records or a delivery): what `afterCommit` waits for.
        var appended = 0
        var committed = 0
        var statistics = AgentStatus.JournalCounters()
        var closed = false
    }

    /// - Parameter executor: the pipeline's executor (`NotificationRouter(executor:)`); one of its own when nil.
    public init(directory: String, logger: Logger, executor: DispatchQueue? = nil) {
        self.queue = executor ?? DispatchQueue(label: "sensorhub.journal")
        self.directory = directory
        self.path = directory + "/" + Self.fileName
        self.logger = logger
    }

    /// The position of the last record appended.
    public var lastPosition: Int { state.withLock { $0.nextPosition - 1 } }

    // MARK: - Start

    /// Opens the journal (creating it) and reads what it holds. A line that can't be read is skipped and counted.
    public func open() throws(StoreError) -> Replay {
        let fd = try AppendFile.open(path, in: directory)
        let contents = AppendFile.contents(path)
        var replay = Replay()
        let decoder = JSONDecoder()
        for line in AppendFile.lines(contents) {
            guard let entry = try? decoder.decode(JournalRecord.Line.self, from: line) else {
                replay.unreadable += 1
                continue
            }
            if let record = entry.record {
                replay.records.append(record)
            } else if let consumer = entry.ack, let through = entry.through {
                replay.acknowledged[consumer] = max(replay.acknowledged[consumer] ?? 0, through)
            } else if !replay.deliveries.replay(entry) {
                replay.unreadable += 1
            }
        }
        if replay.unreadable > 0 {
            logger.warning(
                "skipped unreadable journal lines", metadata: ["lines": "\(replay.unreadable)", "path": "\(path)"])
        }
        state.withLock {
            $0.fd = fd
            $0.size = contents.count
            $0.nextPosition = (replay.records.map(\.position).max() ?? 0) + 1
            // What the file holds is durable: a confirmation waits for nothing read back.
            $0.durable = $0.nextPosition - 1
            $0.acknowledged = replay.acknowledged
            $0.acknowledgementsWritten = replay.acknowledged
            $0.replay = replay.records
            $0.deliveries = replay.deliveries
            $0.statistics.replayed = replay.records.count
            $0.statistics.unreadable = replay.unreadable
        }
        return replay
    }

    /// Names the consumers, in the order they get each batch, and hands each the records read at start that it
    /// has not acknowledged.
    public func attach(_ consumers: [(name: String, consumer: any JournalConsumer)]) {
        let replay = state.withLock { state -> [JournalRecord] in
            state.consumers = consumers
            defer { state.replay = [] }
            let low = consumers.map { state.acknowledged[$0.name] ?? 0 }.min() ?? 0
            for record in state.replay where record.position > low {
                state.retained.append(record.position, record.line)
            }
            return state.replay
        }
        guard let last = replay.last?.position else { return }
        for (name, consumer) in consumers {
            let after = state.withLock { $0.acknowledged[name] ?? 0 }
            let records = replay.filter { $0.position > after }
            if !records.isEmpty { consumer.accept(records, through: last) }
        }
    }

    // MARK: - Records

    /// Takes `records` for the next commit and returns at once; their positions are given here. `delivery`: the
    /// message they came from, kept with them so that the broker sending it again is known (`wasApplied`); a message
    /// that changed nothing is kept too (it may come again after a newer one). `scheduling` false: the caller commits
    /// them itself (`commitNow`) once its batch is appended.
    public func append(_ records: [JournalRecord], delivery: Delivery? = nil, scheduling: Bool = true) {
        guard !records.isEmpty || delivery != nil else { return }
        let now = ContinuousClock.now
        let schedule = state.withLock { state -> Bool in
            for var record in records {
                record.position = state.nextPosition
                state.nextPosition += 1
                state.pending.append(record)
            }
            // Records no held acknowledgement brings back after a power cut (a silence, QoS 0, acknowledgements
            // not held): their batch is handed to the router only once flushed.
            if delivery == nil && !records.isEmpty { state.pendingUnheld = true }
            if let delivery {
                if delivery.sessionIsNew {
                    state.pendingDeliveries = []
                    state.pendingAnew = true
                }
                state.pendingDeliveries.append((delivery.packet, delivery.digest))
            }
            state.appended += 1
            if state.oldestPending == nil { state.oldestPending = now }
            guard scheduling else { return false }
            defer { state.commitScheduled = true }
            return !state.commitScheduled
        }
        if schedule { queue.async { self.commit() } }
    }

    /// Commits what is appended on the calling thread, holding the executor: the write, the consumers that take
    /// written records (routing), the `fsync`, then what waited for it. Everything appended before the call is
    /// committed when it returns (a commit another producer had begun is waited for).
    public func commitNow() {
        queue.sync { commit() }
    }

    /// Runs `action` once everything appended so far is durable: at once when it is, else on the journal's queue
    /// after the commit that makes it so. A cluster's ingest confirms messages to its MQTT sessions this way, which
    /// only then acknowledge them to the broker (a hub on its own confirms each burst after `commitNow`).
    public func afterCommit(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.appended > state.committed else { return true }
            state.waiting.append((state.appended, action))
            return false
        }
        if now { action() }
    }

    /// Returns once everything appended so far is durable and handed to the consumers.
    public func flushed() async {
        await queue.run {}
    }

    /// Says that `consumer` has made every record up to `position` durable itself.
    public func acknowledge(_ consumer: String, through position: Int) {
        let schedule = state.withLock { state -> Bool in
            guard position > state.acknowledged[consumer] ?? 0 else { return false }
            state.acknowledged[consumer] = position
            let low = state.consumers.map { state.acknowledged[$0.name] ?? 0 }.min() ?? position
            let before = state.retained.byteCount
            state.retained.drop(through: low)
            // Only after a burst: a trickle's few kilobytes are reused by the next lines, and a trim walks the heap.
            if before - state.retained.byteCount >= FreedMemory.worthReleasingAfter { state.trimWanted = true }
            defer { state.acknowledgementsScheduled = true }
            return !state.acknowledgementsScheduled
        }
        if schedule {
            queue.async {
                let trim = self.state.withLock { state -> Bool in
                    state.acknowledgementsScheduled = false
                    defer { state.trimWanted = false }
                    return state.trimWanted
                }
                self.write(self.acknowledgementLines(), sync: false)
                self.compactIfWorthIt()
                // A burst's lines are many small blocks that glibc keeps in its arenas once freed: 100,000 statuses
                // left 72 MiB of anon after the registry had them all, 38 MiB after this trim (2026-11-26). Not on
                // this queue, which the next commit needs.
                if trim { DispatchQueue.global().async { FreedMemory.release() } }
            }
        }
    }

    /// Commits what is pending, writes the acknowledgements, empties the file when nothing in it is needed any
    /// more, and closes it.
    public func close() async {
        let (statistics, size) = await queue.run {
            self.commit()
            self.write(self.acknowledgementLines(), sync: false)
            self.compactIfWorthIt(force: true)
            return self.state.withLock { state in
                if state.fd >= 0 { Glibc.close(state.fd) }
                state.fd = -1
                state.closed = true
                return (state.statistics, state.size)
            }
        }
        logger.info(
            "journal closed",
            metadata: [
                "records": "\(statistics.records)", "commits": "\(statistics.commits)",
                "longest_wait_ms": "\(String(format: "%.3f", statistics.longestWait * 1000))",
                "errors": "\(statistics.errors)", "bytes_left": "\(size)",
            ])
    }

    // MARK: - On the journal's queue

    private func commit() {
        let (batch, delivered, anew, appended, oldest, unheld) = state.withLock { state in
            defer {
                state.pendingUnheld = false
                state.committingDeliveries = state.pendingDeliveries
                state.committingAnew = state.pendingAnew
                state.pending = []
                state.pendingDeliveries = []
                state.pendingAnew = false
                state.oldestPending = nil
                state.commitScheduled = false
            }
            return (
                state.pending, state.pendingDeliveries, state.pendingAnew, state.appended, state.oldestPending,
                state.pendingUnheld
            )
        }
        guard !batch.isEmpty || !delivered.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.count * 300 + delivered.count * 24)
        var lines: [(position: Int, line: [UInt8])] = []
        lines.reserveCapacity(batch.count)
        for record in batch {
            let line = record.line
            bytes += line
            bytes.append(UInt8(ascii: "\n"))
            lines.append((record.position, line))
        }
        // After the records: a crash that tore the write leaves no id of a message whose change is missing.
        if !delivered.isEmpty || anew { bytes += Self.deliveriesLine(delivered, anew: anew) }
        bytes += acknowledgementLines()
        let written = write(bytes, sync: false)
        // The router takes the batch now, while the `fsync` runs: a notification does not wait for the disk (its p99
        // here is 1.6 ms). A SIGKILL can't lose what is written; a power cut before the `fsync` can lose the records,
        // but then no PUBACK left either, so the broker sends the messages again and they become the same events,
        // with the same ids, that receivers already have. Acknowledgements to the broker still wait for the `fsync`.
        // Not for a batch with records nothing would send again (`unheld`): those wait for the `fsync`.
        let early = unheld ? [] : state.withLock { $0.consumers }.filter(\.consumer.takesWrittenRecords)
        if let through = batch.last?.position {
            for (_, consumer) in early { consumer.accept(batch, through: through) }
        }
        let durable = written && flushToDisk()
        let waited = oldest.map { .now - $0 } ?? .zero
        let (consumers, ready) = state.withLock { state in
            if let through = batch.last?.position { state.durable = through }
            if anew { state.deliveries.forgetAll() }
            for (packet, digest) in delivered { state.deliveries.record(packet: packet, digest: digest) }
            state.committingDeliveries = []
            state.committingAnew = false
            state.committed = appended
            var ready: [@Sendable () -> Void] = []
            while let first = state.waiting.first, first.append <= appended {
                ready.append(state.waiting.removeFirst().action)
            }
            for (position, line) in lines { state.retained.append(position, line) }
            state.statistics.records += batch.count
            if durable { state.statistics.commits += 1 }
            state.statistics.longestWait = max(state.statistics.longestWait, waited.seconds)
            return (state.consumers, ready)
        }
        for action in ready { action() }
        // Not durable (the disk is full, say): handed on all the same; a notification late is better than none.
        if let through = batch.last?.position {
            for (_, consumer) in consumers where unheld || !consumer.takesWrittenRecords {
                consumer.accept(batch, through: through)
            }
        }
        compactIfWorthIt()
    }

    /// Acknowledgements not in the file yet, as lines.
    private func acknowledgementLines() -> [UInt8] {
        state.withLock { state in
            var bytes: [UInt8] = []
            for (consumer, position) in state.acknowledged where position > state.acknowledgementsWritten[consumer] ?? 0
            {
                bytes += JournalRecord.ackLine(consumer, through: position)
                state.acknowledgementsWritten[consumer] = position
            }
            return bytes
        }
    }

    /// Appends `bytes`; false (logged and counted) when that failed.
    @discardableResult
    private func write(_ bytes: [UInt8], sync: Bool) -> Bool {
        guard !bytes.isEmpty else { return true }
        do throws(StoreError) {
            var fd = state.withLock { $0.fd }
            if fd < 0 {
                guard !state.withLock({ $0.closed }) else { return false }
                fd = try AppendFile.open(path, in: directory)
                state.withLock { $0.fd = fd }
            }
            try AppendFile.append(bytes, to: fd, path: path, sync: sync)
            state.withLock { $0.size += bytes.count }
            return true
        } catch {
            report(error)
            return false
        }
    }

    /// Flushes what was written to disk; false (logged and counted) when that failed.
    private func flushToDisk() -> Bool {
        let fd = state.withLock { $0.fd }
        guard fd >= 0 else { return false }
        do throws(StoreError) {
            try AppendFile.sync(fd, path: path)
            return true
        } catch {
            report(error)
            return false
        }
    }

    private func report(_ error: StoreError) {
        state.withLock { $0.statistics.errors += 1 }
        if let report = failures.withLock({ $0.note() }) {
            logger.error(
                "cannot write the journal: what arrives now is durable only once it is in the registry and outbox",
                metadata: ["path": "\(path)", "error": "\(error)", "failures_since_last_report": "\(report)"])
        }
    }
}
