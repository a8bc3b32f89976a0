import Foundation
import HubCore
import HubSupport
import Logging

/// The durable outbox: every notification is written here, and flushed to disk, before its first attempt; a line
/// marks it done once it is delivered or given up on. After a crash or restart, what has no done line is pending
/// and is sent again, with the same id (at least once).
///
/// The lines go to a `NotificationLog`: in hubd the journal's file, so that one log and one `fsync` take a burst's
/// records and the notifications routed from them (issue 54); for a router on its own, `outbox.jsonl` (`OutboxFile`).
/// They are JSON lines, `{"add":{…notification…}}` and `{"done":"<key>"}`. A batch of adds is one `write` (group
/// commit), flushed by the `fsync` that follows it; done lines are written without `fsync`, because losing one only
/// means a duplicate, which receivers must accept anyway. A torn last line (a crash mid-write) or any line that can't
/// be read is skipped, logged and counted, never fatal.
///
/// Blocking file I/O runs on its own serial queue, never on Swift's cooperative threads; adds are written on the
/// pipeline's executor, holding that queue (`append`).
public final class Outbox: Sendable {
    public var path: String { log.path }
    private let log: any NotificationLog
    private let directory: String
    private let queue = DispatchQueue(label: "sensorhub.outbox")
    private let state = Locked(State())
    private let logger: Logger?

    struct State {
        /// Keys added and not yet done, with their line, for compaction.
        var pending: [String: [UInt8]] = [:]
        /// Order of `pending`, for a compaction that keeps the original order.
        var order: [String] = []
        /// Every key the file held when opened, pending or done: an event the journal hands over again after a
        /// crash is not queued a second time.
        var seenAtOpen = Set<String>()
        var doneLines = 0
        var unreadableLines = 0
        /// Done marks not yet written (`markDoneLater`).
        var doneBacklog: [String] = []
        /// A timer will write them (`doneMarkDelay`).
        var doneTimerArmed = false
        /// Writes that failed (logged): done marks that may reappear as duplicates, compactions that did not happen.
        var errors = 0
        /// Adds written without `fsync` since the last one (`append(_:durable: false)`, then `sync()`), or whose
        /// write failed (the log mends it at the next `sync()`).
        var unsynced = false
        /// `fsync`s of adds since start (the bench counts them per notification).
        var syncs = 0
        /// What the pending lines take in a log, a newline after each: counted as they come and go, so a log weighs
        /// a rewrite without gathering them (`pendingLines(within:)`).
        var pendingBytes = 0

        mutating func addPending(_ key: String, _ line: [UInt8]) {
            if let old = pending.updateValue(line, forKey: key) {
                pendingBytes -= old.count + 1
            } else {
                order.append(key)
            }
            pendingBytes += line.count + 1
        }

        /// Whether `key` was pending.
        mutating func removePending(_ key: String) {
            guard let line = pending.removeValue(forKey: key) else { return }
            pendingBytes -= line.count + 1
        }
    }

    /// - Parameter log: where the lines go (the journal's file in hubd); `outbox.jsonl` in `directory` when nil.
    public init(directory: String, log: (any NotificationLog)? = nil, logger: Logger? = nil) {
        self.directory = directory
        self.log = log ?? OutboxFile(directory: directory, logger: logger)
        self.logger = logger
    }

    /// Writes that failed since start (each logged).
    public var errors: Int { state.withLock { $0.errors } }

    /// Lines that could not be read when loading: torn by a crash, or damaged.
    public var unreadableLines: Int { state.withLock { $0.unreadableLines } }

    /// Notifications waiting to be delivered.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// `fsync`s of added notifications since start.
    public var syncCount: Int { state.withLock { $0.syncs } }

    /// Opens the outbox and returns the notifications still pending, oldest first.
    public func open() async throws(StoreError) -> [Notification] {
        try await perform { () throws(StoreError) in try self.openNow() }
    }

    private func openNow() throws(StoreError) -> [Notification] {
        // An older hubd's own file comes first: its lines are older than any the log holds.
        let legacy = directory + "/" + OutboxFile.fileName
        let hosted = log.path != legacy
        let legacyLines = hosted ? AppendFile.lines(AppendFile.contents(legacy)).map { Data($0) } : []
        // An outbox gone (the router released before the journal's last compaction at a stop): nil, so the log keeps
        // what it holds rather than taking "nothing pending" for the truth.
        let logLines = try log.openNotifications(pending: { [weak self] in self?.pendingLines(within: $0) })
        let decoder = JSONDecoder()
        var adds: [String: (Notification, [UInt8])] = [:]
        var order: [String] = []
        var seen = Set<String>()
        var unreadable = 0
        var doneLines = 0
        var fromLegacy = Set<String>()
        for (index, line) in (legacyLines + logLines).enumerated() {
            if let entry = try? decoder.decode(Entry.self, from: line) {
                if let notification = entry.add {
                    if adds[notification.key] == nil { order.append(notification.key) }
                    adds[notification.key] = (notification, Array(line))
                    seen.insert(notification.key)
                    if index < legacyLines.count { fromLegacy.insert(notification.key) }
                } else if let key = entry.done {
                    adds[key] = nil
                    doneLines += 1
                }
            } else {
                unreadable += 1
            }
        }
        let pendingOrder = order.filter { adds[$0] != nil }
        state.withLock {
            $0.pending = adds.mapValues { $0.1 }
            $0.pendingBytes = $0.pending.values.reduce(0) { $0 + $1.count + 1 }
            $0.order = pendingOrder
            $0.seenAtOpen = seen
            $0.doneLines = doneLines
            $0.unreadableLines = unreadable
        }
        if hosted && FileManager.default.fileExists(atPath: legacy) {
            // Into the log, flushed, before the old file goes: a crash in between reads both, and the keys are the same.
            let moving = pendingOrder.filter(fromLegacy.contains)
            var bytes: [UInt8] = []
            for key in moving { bytes += adds[key]!.1 + [UInt8(ascii: "\n")] }
            if !bytes.isEmpty { try log.appendNotifications(bytes, sync: true) }
            unlink(legacy)
            logger?.notice(
                "moved the outbox into the journal",
                metadata: [
                    "from": "\(legacy)", "to": "\(log.path)", "pending": "\(moving.count)",
                ])
        }
        try compactIfWorthIt()
        return pendingOrder.compactMap { adds[$0]?.0 }
    }

    /// The lines of the notifications still pending, in the order they were added: what a rewritten log keeps. Nil
    /// when they take `within` bytes or more.
    private func pendingLines(within: Int) -> [UInt8]? {
        state.withLock { state in
            guard state.pendingBytes < within else { return nil }
            state.order = state.order.filter { state.pending[$0] != nil }
            var bytes: [UInt8] = []
            for key in state.order { bytes += state.pending[key]! + [UInt8(ascii: "\n")] }
            return bytes
        }
    }

    /// Writes `notifications`, flushed to disk unless `durable` is false; returns those that were new. One the outbox
    /// already holds (pending, or in the file when it was opened) is left out: the journal hands events over again
    /// after a crash, and the same event must not be queued twice.
    ///
    /// Synchronous, on the caller's thread (the pipeline's executor): the file's queue is taken for the write, so a
    /// done mark made by a delivery of these notifications is written after their add.
    ///
    /// - Parameter durable: false to leave the `fsync` to a later `sync()`. The router does so, and reports the
    ///   journal position as routed only after that `sync()`: until then the journal keeps the events, and a crash
    ///   replays them into the same notifications (the same ids). So a burst pays one `fsync`, the journal's, and
    ///   the outbox is flushed once a second at most (issue 38: the outbox's own `fsync` per batch was half of a
    ///   notification's disk time).
    @discardableResult
    public func append(_ notifications: [Notification], durable: Bool = true) throws(StoreError) -> [Notification] {
        let fresh = self.fresh(notifications)
        try add(fresh, durable: durable)
        return fresh
    }

    /// `append` for notifications `fresh` has already picked: the router keeps them to send without the outbox when
    /// the write fails.
    public func add(_ fresh: [Notification], durable: Bool) throws(StoreError) {
        guard !fresh.isEmpty else { return }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(fresh.count * 400)
        var encoded: [(String, [UInt8])] = []
        for notification in fresh {
            // JSONWriter, not JSONEncoder (which was 15 % of hubd's time in the fan-out benchmark); JSONDecoder reads
            // it back on a restart.
            let line = Self.line(notification)
            buffer += line
            buffer.append(UInt8(ascii: "\n"))
            encoded.append((notification.key, line))
        }
        let outcome = queue.sync { () -> Result<Void, StoreError> in
            do throws(StoreError) {
                try log.appendNotifications(buffer, sync: durable)
                state.withLock { state in
                    if durable { state.syncs += 1 } else { state.unsynced = true }
                    for (key, line) in encoded {
                        state.addPending(key, line)
                    }
                }
                return .success(())
            } catch {
                // The log writes the pending notifications anew before its next `sync` succeeds.
                state.withLock { $0.unsynced = true }
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// Those of `notifications` the outbox does not hold (pending, or in the file when it was opened).
    public func fresh(_ notifications: [Notification]) -> [Notification] {
        state.withLock { state in
            notifications.filter { state.pending[$0.key] == nil && !state.seenAtOpen.contains($0.key) }
        }
    }

    /// Flushes to disk the adds written without it (`append(_:durable: false)`); returns once they are durable.
    public func sync() async throws(StoreError) {
        // The adds written so far: an add from now on sets `unsynced` again, for the next `sync`.
        var wanted = state.withLock { state -> Bool in
            defer { state.unsynced = false }
            return state.unsynced
        }
        // The journal's own `fsync`, due within `sync_delay`, covers them: no second one.
        if wanted, await log.awaitNotificationsFlushed() {
            state.withLock { $0.syncs += 1 }
            wanted = false
        }
        try await perform { [wanted] () throws(StoreError) in
            // The done marks waiting go with it: the write is one more line in a flush that runs anyway.
            self.writeDoneBacklog()
            guard wanted else { return }
            do throws(StoreError) {
                try self.log.syncNotifications()
            } catch {
                self.state.withLock { $0.unsynced = true }
                throw error
            }
            self.state.withLock { $0.syncs += 1 }
        }
    }

    /// How long a done mark may wait when no routing pass comes to write it (`writeWaitingDoneMarks`) and no `sync`
    /// (the router's, a second after it routed): a hub between bursts. A kill meanwhile loses the marks of at most
    /// this long, and those notifications are sent again after the restart, with their ids. A second, not 100 ms:
    /// each timer is armed, fired and run by libdispatch's threads, 0.3 context switches a notification at 100 msg/s.
    static let doneMarkDelay = DispatchTimeInterval.seconds(1)

    /// Marks `key` done without waiting: the notification stops pending at once (`pendingCount`), and its mark is
    /// written by the next routing pass (`writeWaitingDoneMarks`), or within `doneMarkDelay`, or at the next
    /// `sync()` or `close()`. Each delivery took a hop to the outbox's queue before (a context switch or two a
    /// notification).
    public func markDoneLater(_ key: String) {
        let arm = state.withLock { state -> Bool in
            state.doneBacklog.append(key)
            state.removePending(key)
            defer { state.doneTimerArmed = true }
            return !state.doneTimerArmed
        }
        guard arm else { return }
        queue.asyncAfter(deadline: .now() + Self.doneMarkDelay) {
            self.state.withLock { $0.doneTimerArmed = false }
            self.writeDoneBacklog()
        }
    }

    /// Writes the done marks waiting, on the caller's thread (holding the file's queue): the router calls it at
    /// each pass on the pipeline's executor, so a mark is written with the next burst's adds, without a hop.
    public func writeWaitingDoneMarks() {
        guard state.withLock({ !$0.doneBacklog.isEmpty }) else { return }
        queue.sync { writeDoneBacklog() }
    }

    /// On the queue: writes the done marks waiting (`markDoneLater`).
    private func writeDoneBacklog() {
        let keys = state.withLock { state -> [String] in
            defer { state.doneBacklog = [] }
            return state.doneBacklog
        }
        do throws(StoreError) {
            try writeDone(keys)
        } catch {
            state.withLock { $0.errors += 1 }
            logger?.error("cannot write to the outbox", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// Marks `keys` done (delivered, failed for good, dropped or expired).
    public func markDone(_ keys: [String]) async {
        guard !keys.isEmpty else { return }
        do {
            try await perform { () throws(StoreError) in try self.writeDone(keys) }
        } catch {
            // Not fatal: a done mark that did not make it means a duplicate after a restart, at worst.
            state.withLock { $0.errors += 1 }
            logger?.error("cannot write to the outbox", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// On the queue: writes done lines for `keys`, forgets them, and compacts when worth it.
    private func writeDone(_ keys: [String]) throws(StoreError) {
        guard !keys.isEmpty else { return }
        try log.appendNotifications(Self.doneLines(keys), sync: false)
        state.withLock { state in
            state.doneLines += keys.count
            for key in keys { state.removePending(key) }
        }
        try compactIfWorthIt()
    }

    /// Writes the done marks waiting, and closes the file.
    public func close() async {
        try? await perform { () throws(StoreError) in
            self.writeDoneBacklog()
            self.log.closeNotifications()
        }
    }

    /// Lets the log rewrite itself with only the pending notifications once done lines are most of the outbox's.
    private func compactIfWorthIt() throws(StoreError) {
        let worth = state.withLock { state in
            state.doneLines + state.unreadableLines >= 1_000 && state.doneLines > 2 * state.pending.count
        }
        guard worth, try log.compactNotifications() else { return }
        state.withLock {
            // Every pending add is in the rewritten log, flushed before its rename.
            $0.unsynced = false
            $0.doneLines = 0
            $0.unreadableLines = 0
        }
    }

    private func perform<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError)
        -> T
    {
        let result = await queue.run { () -> Result<T, StoreError> in
            do throws(StoreError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
