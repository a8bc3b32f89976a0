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
/// **Group commit.** One `write` takes everything appended since the last commit, on the pipeline's executor (a
/// serial queue, never a cooperative thread), and one `fsync` everything written since the last: MQTT ingest
/// commits each burst it read on the network thread (`commitNow`), and puts the `fsync` off for the bursts of
/// `sensors.sync_delay` when every record of them came with a held acknowledgement (`syncNow` then); other
/// producers' appends schedule a commit, `fsync` included. While one batch is flushed the next gathers, so a
/// record waits about one `fsync` past that delay, however high the rate (`AgentStatus.JournalCounters.longestWait`).
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
    let directory: String
    let logger: Logger
    /// Where commits run: the pipeline's executor, which the router shares in a hub on its own, so a batch is routed
    /// on the thread that wrote it.
    let queue: DispatchQueue
    /// Internal for its extensions in other files (`Journal+Deliveries.swift`).
    let state = Locked(State())
    /// Held for every use of the file's descriptor: the outbox writes its done marks from its own queue, and a
    /// compaction on the executor swaps the file under them. Taken before `state`, never inside it.
    let file = NSLock()
    let failures = Locked(LogThrottle())

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
        /// Bytes allocated for the file ahead of its appends (`AppendFile.reserve`), from `size` on.
        var reserved = 0
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
        /// The appends written to the file, and those flushed to disk too.
        var written = 0
        var committed = 0
        /// The batches written since the last `fsync`, for the consumers that take durable records only, and
        /// whether each had records no held acknowledgement brings back; whether a write failed meanwhile; when the
        /// oldest of their records was appended.
        var unsynced: [(records: [JournalRecord], unheld: Bool)] = []
        var writeFailed = false
        var oldestUnsynced: ContinuousClock.Instant?
        var statistics = AgentStatus.JournalCounters()
        var closed = false
        /// The outbox's lines read at start, until the outbox takes them (`openNotifications`); a compaction before
        /// keeps them as they are.
        var notificationLines: [Data] = []
        /// The pending notifications' lines, from the outbox once it has opened: what a compaction keeps of its.
        var pendingNotifications: (@Sendable (_ within: Int) -> [UInt8]?)?
        /// Writes of records or notifications, and how many of them an `fsync` has covered (acknowledgements and done
        /// marks don't count: losing one costs a repeat, no more).
        var writesToFlush = 0
        var writesFlushed = 0
        /// The outbox waiting for an `fsync` to cover the `target`th write (`awaitNotificationsFlushed`).
        var flushWaiters: [(id: UInt64, target: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter: UInt64 = 0
        /// An `fsync` failed: what it was to flush may be gone from the page cache, so the outbox's `sync` waits for
        /// the file to be written anew (`compactIfWorthIt(mend: true)`).
        var rewriteWanted = false
        /// `fsync`s of the file since start (the tests count them).
        var flushes = 0
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
        var notificationLines: [Data] = []
        for line in AppendFile.lines(contents) {
            // The outbox's lines (`Journal+Notifications.swift`) are its to read.
            if line.starts(with: Self.addPrefix) || line.starts(with: Self.donePrefix) {
                notificationLines.append(Data(line))
                continue
            }
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
            $0.reserved = 0
            $0.notificationLines = notificationLines
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

    /// Numbers the records appended from now after `position` at least: a consumer that keeps the position it has
    /// made durable with what it wrote (the history) tells records it has from records it lacks by it, and the
    /// numbering starts again at 1 when hubd starts on an empty journal. Called before anything is appended.
    public func continueNumbering(after position: Int) {
        state.withLock { state in
            guard position >= state.nextPosition else { return }
            state.nextPosition = position + 1
            // No record lies between: nothing to wait for up to there.
            if state.pending.isEmpty { state.durable = position }
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
    /// `syncing` false: the `fsync` waits for a later commit or `syncNow` (ingest shares one among the bursts of
    /// `sensors.sync_delay`), unless a record came with no held acknowledgement. Returns whether everything
    /// appended is durable.
    @discardableResult
    public func commitNow(syncing: Bool = true) -> Bool {
        queue.sync { commit(syncing: syncing) }
    }

    /// Commits what is appended and flushes everything written to disk, on the calling thread, holding the executor.
    public func syncNow() {
        _ = queue.sync { commit() }
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
        _ = await queue.run { self.commit() }
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
                self.write(self.acknowledgementLines(), sync: false, flushWanted: false)
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
            self.write(self.acknowledgementLines(), sync: false, flushWanted: false)
            self.compactIfWorthIt(force: true)
            return self.file.withLock {
                self.state.withLock { state in
                    if state.fd >= 0 { Glibc.close(state.fd) }
                    state.fd = -1
                    state.closed = true
                    return (state.statistics, state.size)
                }
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
}
