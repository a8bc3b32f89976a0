import Foundation
import HubCore
import HubSupport
import Logging

/// The durable outbox: every notification is written here, and flushed to disk, before its first attempt; a line
/// marks it done once it is delivered or given up on. After a crash or restart, what has no done line is pending
/// and is sent again, with the same id (at least once).
///
/// The file (`outbox.jsonl` in the state directory) is an append-only journal of JSON lines:
/// `{"add":{…notification…}}` and `{"done":"<key>"}`. A batch of adds is one `write` and one `fsync` (group
/// commit); done lines are written without `fsync`, because losing one only means a duplicate, which receivers
/// must accept anyway. When most of the file is history, it is rewritten with only the pending notifications
/// (temporary file, `fsync`, `rename`). A torn last line (a crash mid-write) or any line that can't be read is
/// skipped, logged and counted, never fatal.
///
/// Blocking file I/O runs on its own serial queue, never on Swift's cooperative threads; adds are written on the
/// pipeline's executor, holding that queue (`append`).
public final class Outbox: Sendable {
    public static let fileName = "outbox.jsonl"

    public let path: String
    private let directory: String
    private let queue = DispatchQueue(label: "sensorhub.outbox")
    private let state = Locked(State())
    private let logger: Logger?
    /// Told when notifications stop pending (`hubctl status` shows how many are).
    private let moved: ChangeSignal?

    struct State {
        var fd: Int32 = -1
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
        /// Adds written without `fsync` since the last one (`append(_:durable: false)`, then `sync()`).
        var unsynced = false
        /// `fsync`s of adds since start (the bench counts them per notification).
        var syncs = 0
        /// A write or `fsync` of adds failed: the next `sync()` rewrites the file from the pending notifications.
        var rewriteWanted = false
    }

    public init(directory: String, logger: Logger? = nil, moved: ChangeSignal? = nil) {
        self.directory = directory
        self.path = directory + "/" + Self.fileName
        self.logger = logger
        self.moved = moved
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
        let fd = try AppendFile.open(path, in: directory)
        let data = AppendFile.contents(path)
        let decoder = JSONDecoder()
        var adds: [String: (Notification, [UInt8])] = [:]
        var order: [String] = []
        var seen = Set<String>()
        var unreadable = 0
        var doneLines = 0
        for line in AppendFile.lines(data) {
            if let entry = try? decoder.decode(Entry.self, from: line) {
                if let notification = entry.add {
                    if adds[notification.key] == nil { order.append(notification.key) }
                    adds[notification.key] = (notification, Array(line))
                    seen.insert(notification.key)
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
            if $0.fd >= 0 { Glibc.close($0.fd) }
            $0.fd = fd
            $0.pending = adds.mapValues { $0.1 }
            $0.order = pendingOrder
            $0.seenAtOpen = seen
            $0.doneLines = doneLines
            $0.unreadableLines = unreadable
        }
        try compactIfWorthIt()
        return pendingOrder.compactMap { adds[$0]?.0 }
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
                try write(buffer, sync: durable)
                state.withLock { state in
                    if durable { state.syncs += 1 } else { state.unsynced = true }
                    for (key, line) in encoded {
                        if state.pending.updateValue(line, forKey: key) == nil { state.order.append(key) }
                    }
                }
                return .success(())
            } catch {
                state.withLock { $0.rewriteWanted = true }
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
        try await perform { () throws(StoreError) in
            // The done marks waiting go with it: the write is one more line in a flush that runs anyway.
            self.writeDoneBacklog()
            let (unsynced, rewrite) = self.state.withLock { ($0.unsynced, $0.rewriteWanted) }
            guard unsynced || rewrite else { return }
            if rewrite || !self.flushAdds() { try self.compactIfWorthIt(force: true) }
            self.state.withLock {
                $0.unsynced = false
                $0.rewriteWanted = false
                $0.syncs += 1
            }
        }
    }

    /// On the queue: `fsync`s the file the adds went to. False (logged) when that failed: Linux reports a writeback
    /// error once and then takes the pages for clean, so a second `fsync` would succeed without them, and the pending
    /// notifications are to be written anew (`rewriteWanted`).
    private func flushAdds() -> Bool {
        do throws(StoreError) {
            // A compaction that failed may have closed the descriptor: the file at the path holds the adds.
            var fd = state.withLock { $0.fd }
            if fd < 0 {
                fd = try AppendFile.open(path, in: directory)
                state.withLock { $0.fd = fd }
            }
            try AppendFile.sync(fd, path: path)
            return true
        } catch {
            state.withLock { $0.rewriteWanted = true }
            logger?.warning(
                "cannot flush the outbox; writing its pending notifications anew",
                metadata: ["path": "\(path)", "error": "\(error)"])
            return false
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
        let (arm, removed) = state.withLock { state -> (Bool, Bool) in
            state.doneBacklog.append(key)
            let removed = state.pending.removeValue(forKey: key) != nil
            defer { state.doneTimerArmed = true }
            return (!state.doneTimerArmed, removed)
        }
        if removed { moved?.note() }
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
        var writer = JSONWriter(capacity: keys.count * 64)
        for key in keys {
            writer.raw("{\"done\":")
            writer.string(key)
            writer.raw("}\n")
        }
        try write(writer.bytes, sync: false)
        let removed = state.withLock { state -> Bool in
            state.doneLines += keys.count
            return keys.reduce(false) { state.pending.removeValue(forKey: $1) != nil || $0 }
        }
        // The done marks land after the backend's counters moved (on this queue, later): the status file must not
        // keep showing them pending until its next heartbeat.
        if removed { moved?.note() }
        try compactIfWorthIt()
    }

    /// Writes the done marks waiting, and closes the file.
    public func close() async {
        try? await perform { () throws(StoreError) in
            self.writeDoneBacklog()
            self.state.withLock {
                if $0.fd >= 0 { Glibc.close($0.fd) }
                $0.fd = -1
            }
        }
    }

    /// `{"add":{…}}` for `notification`, in the shape `Entry`'s Codable reads (`OutboxLineTests` checks both ways).
    static func line(_ notification: Notification) -> [UInt8] {
        var writer = JSONWriter(capacity: 400)
        var first = true
        writer.raw("{\"add\":{")
        writer.key("id", first: &first)
        writer.string(notification.id)
        writer.key("backend", first: &first)
        writer.string(notification.backend)
        if let target = notification.target {
            writer.key("target", first: &first)
            writer.string(target)
        }
        writer.key("rule", first: &first)
        writer.string(notification.rule)
        writer.key("event", first: &first)
        notification.event.write(into: &writer)
        writer.key("title", first: &first)
        writer.string(notification.title)
        writer.key("body", first: &first)
        writer.string(notification.body)
        writer.key("priority", first: &first)
        writer.number(notification.priority)
        writer.key("created", first: &first)
        writer.timestamp(notification.created)
        if let alert = notification.alert {
            writer.key("alert", first: &first)
            var inner = true
            writer.raw("{")
            alert.writeFields(into: &writer, first: &inner)
            writer.raw("}")
        }
        writer.raw("}}")
        return writer.bytes
    }

    // MARK: - On the outbox queue

    struct Entry: Codable {
        var add: Notification?
        var done: String?
    }

    private func write(_ bytes: [UInt8], sync: Bool) throws(StoreError) {
        var fd = state.withLock { $0.fd }
        defer { state.withLock { $0.fd = fd } }
        try AppendFile.append(bytes, reopening: &fd, path: path, in: directory, sync: sync)
    }

    /// Rewrites the file with only the pending notifications once done lines are most of it, or when `force`d.
    private func compactIfWorthIt(force: Bool = false) throws(StoreError) {
        let (worth, lines) = state.withLock { state -> (Bool, [UInt8]) in
            guard
                force || (state.doneLines + state.unreadableLines >= 1_000 && state.doneLines > 2 * state.pending.count)
            else {
                return (false, [])
            }
            state.order = state.order.filter { state.pending[$0] != nil }
            var bytes: [UInt8] = []
            for key in state.order { bytes += state.pending[key]! + [UInt8(ascii: "\n")] }
            return (true, bytes)
        }
        guard worth else { return }
        // Whatever happens, stop appending to the old descriptor: after the rename it is a deleted file, and
        // appends there would be lost. The next write opens whatever file is at the path.
        defer {
            state.withLock {
                if $0.fd >= 0 { Glibc.close($0.fd) }
                $0.fd = -1
            }
        }
        try replaceFileAtomically(at: path, with: lines)
        state.withLock {
            // Every pending add is in the new file, flushed before its rename.
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
