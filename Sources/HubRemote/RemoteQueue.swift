import Foundation
import HubCore
import HubSupport
import Logging

/// The remote store's durable queue: every reading and event bound for the database is written here, and flushed
/// to disk, before the journal is told it is safe; a line marks entries done once the database has committed them.
/// After a crash or restart, what has no done mark is sent again (the database ignores what it has).
///
/// `remote-queue.jsonl` in the state directory, append-only JSON lines like the outbox's: `{"add":{…entry…}}`,
/// `{"done":["<key>",…]}` per committed batch, and `{"ended":["<session>",…]}` where a compaction dropped the
/// ends of sessions it must remember. A batch of adds is one `write` and one `fsync` (group commit); done lines are
/// not flushed (losing one means a duplicate the database ignores). When done entries are most of the file, it is
/// rewritten with what waits (temporary file, `fsync`, `rename`). A torn last line or any line that can't be read
/// is skipped and counted, never fatal.
///
/// Blocking file I/O runs on its own serial queue, never on Swift's cooperative threads.
public final class RemoteQueue: Sendable {
    public static let fileName = "remote-queue.jsonl"
    /// Where entries the database refused for good are kept, one JSON line each with the reason.
    public static let rejectedFileName = "remote-rejected.jsonl"

    public let path: String
    /// The file of refused entries' name: `remote-rejected.jsonl`, or `<name>-rejected.jsonl`.
    public let rejectedFileName: String
    private let directory: String
    private let queue = DispatchQueue(label: "sensorhub.remote-queue")
    private let state: Locked<State>
    private let logger: Logger?

    struct State {
        var fd: Int32 = -1
        var backlog: RemoteBacklog
        /// Every key the file held when opened, waiting or done: an event the journal hands over again after a
        /// crash is not queued a second time.
        var seenAtOpen = Set<String>()
        var doneMarks = 0
        var unreadableLines = 0
        var errors = 0
    }

    struct Line: Codable {
        var add: RemoteEntry?
        var done: [String]?
        var ended: [String]?
    }

    /// - Parameter name: what the files are named after: `remote` (`remote-queue.jsonl`), or another queue's name
    ///   (`history`: the store's history, `history-queue.jsonl`).
    public init(directory: String, mode: RemoteSettings.Mode, name: String = "remote", logger: Logger? = nil) {
        self.directory = directory
        self.path = directory + "/" + (name == "remote" ? Self.fileName : name + "-queue.jsonl")
        self.rejectedFileName = name == "remote" ? Self.rejectedFileName : name + "-rejected.jsonl"
        self.state = Locked(State(backlog: RemoteBacklog(mode: mode)))
        self.logger = logger
    }

    /// Entries waiting for the database, held ones included.
    public var count: Int { state.withLock { $0.backlog.count } }

    /// Entries held until their session ends (`record` mode).
    public var heldCount: Int { state.withLock { $0.backlog.heldCount } }

    /// Lines that could not be read when opening: torn by a crash, or damaged.
    public var unreadableLines: Int { state.withLock { $0.unreadableLines } }

    /// Done marks that could not be written (each logged): entries that will be sent again after a restart.
    public var errors: Int { state.withLock { $0.errors } }

    /// Opens the queue, reading what waits from the file; returns how many entries wait.
    @discardableResult
    public func open() async throws(StoreError) -> Int {
        try await perform { () throws(StoreError) in try self.openNow() }
    }

    private func openNow() throws(StoreError) -> Int {
        let fd = try AppendFile.open(path, in: directory)
        let data = AppendFile.contents(path)
        let decoder = JSONDecoder()
        var backlog = RemoteBacklog(mode: state.withLock { $0.backlog.mode })
        var seen = Set<String>()
        var unreadable = 0
        var doneMarks = 0
        for text in AppendFile.lines(data) {
            guard let line = try? decoder.decode(Line.self, from: text) else {
                unreadable += 1
                continue
            }
            if let entry = line.add {
                backlog.add(entry)
                seen.insert(entry.key)
            }
            if let keys = line.done { doneMarks += backlog.remove(keys) }
            for session in line.ended ?? [] { backlog.noteEnded(session) }
        }
        if unreadable > 0 {
            logger?.warning(
                "skipped lines of the remote queue that could not be read (a torn write?)",
                metadata: ["path": "\(path)", "lines": "\(unreadable)"])
        }
        let waiting = backlog.count
        state.withLock {
            if $0.fd >= 0 { Glibc.close($0.fd) }
            $0.fd = fd
            $0.backlog = backlog
            $0.seenAtOpen = seen
            $0.doneMarks = doneMarks
            $0.unreadableLines = unreadable
        }
        try compactIfWorthIt()
        return waiting
    }

    /// Writes `entries` and flushes them to disk; returns once they are durable, with how many were new (one the
    /// queue holds, or held when it was opened, is left out).
    @discardableResult
    public func append(_ entries: [RemoteEntry]) async throws(StoreError) -> Int {
        let fresh = state.withLock { state in
            var keys = Set<String>()
            return entries.filter {
                let key = $0.key
                return !state.backlog.contains(key) && !state.seenAtOpen.contains(key) && keys.insert(key).inserted
            }
        }
        guard !fresh.isEmpty else { return 0 }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        var bytes: [UInt8] = []
        for entry in fresh {
            guard let line = try? encoder.encode(Line(add: entry)) else { continue }
            bytes += line
            bytes.append(UInt8(ascii: "\n"))
        }
        let buffer = bytes
        try await perform { () throws(StoreError) in
            try self.write(buffer, sync: true)
            self.state.withLock { state in
                for entry in fresh { state.backlog.add(entry) }
            }
        }
        return fresh.count
    }

    /// The first `limit` entries that may go now, in the order they came.
    public func nextBatch(limit: Int) -> [RemoteEntry] {
        state.withLock { $0.backlog.nextBatch(limit: limit) }
    }

    /// Marks `keys` done: the database has committed them.
    public func markDone(_ keys: [String]) async {
        guard !keys.isEmpty else { return }
        do {
            try await perform { () throws(StoreError) in
                let line = (try? JSONEncoder().encode(Line(done: keys))).map { Array($0) + [UInt8(ascii: "\n")] }
                self.state.withLock {
                    $0.doneMarks += $0.backlog.remove(keys)
                }
                if let line { try self.write(line, sync: false) }
                try self.compactIfWorthIt()
            }
        } catch {
            // Not fatal: without the mark, the entries are sent again after a restart and the database ignores them.
            state.withLock { $0.errors += 1 }
            logger?.error("cannot write to the remote queue", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// Appends `entry` with `reason` to the rejected file, then marks it done.
    public func setAside(_ entry: RemoteEntry, reason: String) async {
        struct Rejected: Encodable {
            var entry: RemoteEntry
            var reason: String
            var time: String
        }
        let rejected = Rejected(entry: entry, reason: reason, time: Timestamp.now.iso8601)
        let path = directory + "/" + rejectedFileName
        let directory = self.directory
        do {
            let line = try JSONEncoder().encode(rejected) + [UInt8(ascii: "\n")]
            try await perform { () throws(StoreError) in
                let fd = try AppendFile.open(path, in: directory)
                defer { Glibc.close(fd) }
                try AppendFile.append(Array(line), to: fd, path: path, sync: true)
            }
        } catch {
            logger?.error("cannot keep a refused entry", metadata: ["path": "\(path)", "error": "\(error)"])
        }
        await markDone([entry.key])
    }

    /// Closes the file.
    public func close() async {
        try? await perform { () throws(StoreError) in
            self.state.withLock {
                if $0.fd >= 0 { Glibc.close($0.fd) }
                $0.fd = -1
            }
        }
    }

    // MARK: - On the queue's own thread

    private func write(_ bytes: [UInt8], sync: Bool) throws(StoreError) {
        var fd = state.withLock { $0.fd }
        defer { state.withLock { $0.fd = fd } }
        try AppendFile.append(bytes, reopening: &fd, path: path, in: directory, sync: sync)
    }

    /// Rewrites the file with what waits, and the sessions known to have ended, once done marks are most of it.
    private func compactIfWorthIt() throws(StoreError) {
        let bytes = state.withLock { state -> [UInt8]? in
            guard state.doneMarks + state.unreadableLines >= 1_000, state.doneMarks > 2 * state.backlog.count else {
                return nil
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            var bytes: [UInt8] = []
            let ended = state.backlog.endedSessions
            if !ended.isEmpty, let line = try? encoder.encode(Line(ended: ended)) { bytes += line + [10] }
            for entry in state.backlog.entries {
                if let line = try? encoder.encode(Line(add: entry)) { bytes += line + [10] }
            }
            return bytes
        }
        guard let bytes else { return }
        // Whatever happens, stop appending to the old descriptor: after the rename it is a deleted file.
        defer {
            state.withLock {
                if $0.fd >= 0 { Glibc.close($0.fd) }
                $0.fd = -1
            }
        }
        try replaceFileAtomically(at: path, with: bytes)
        state.withLock {
            $0.doneMarks = 0
            $0.unreadableLines = 0
        }
        logger?.debug("compacted the remote queue", metadata: ["path": "\(path)", "waiting": "\(count)"])
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
