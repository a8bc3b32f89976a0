import Foundation
import HubSupport

/// The registry on disk: `defaults.json` in the state directory, replaced crash-safely, changed under a lock, and
/// the statuses hubd recorded since it was last written, appended to `defaults.statuses` (`DefaultsStore+StatusLog`).
///
/// - Writing: a temporary file in the same directory (mode 0600) → `fsync` → `rename` over `defaults.json` →
///   `fsync` of the directory. A reader sees the old document or the new one, never half of one; a crash at any
///   point leaves one of the two. An `fsync` failure fails the write (Linux reports a writeback error once).
/// - Changing: `flock` on `defaults.json.lock` (a separate file, since `rename` replaces the document's inode)
///   serialises writers across processes; each change reads the newest document under the lock.
/// - A document that is not valid JSON, has the wrong shape or breaks the registry's rules is reported with its
///   line and column and never overwritten.
public struct DefaultsStore: Sendable {
    public static let fileName = "defaults.json"

    /// The state directory.
    public let directory: String

    public init(directory: String) {
        self.directory = URL(fileURLWithPath: directory).standardizedFileURL.path
    }

    /// Replaces another file of the state directory (the broker password) while holding the writers' lock.
    public func replaceFile(named name: String, with bytes: [UInt8]) throws(StoreError) {
        try createDirectory(directory)
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        try replaceFileAtomically(at: directory + "/" + name, with: bytes)
    }

    public var path: String { directory + "/" + Self.fileName }
    var lockPath: String { path + ".lock" }

    // MARK: Reading

    /// The current document, with the status log's updates; an empty one when there is no file yet. Takes no lock:
    /// replacement is atomic, and the log is read first (see `read(ifChangedFrom:)`).
    public func read() throws(StoreError) -> DefaultsDocument {
        try read(ifChangedFrom: nil).document ?? DefaultsDocument()
    }

    /// Which file a document came from: every write renames a new file over the old, so a file with the same
    /// inode, size and modification time still holds the same document — unless it was replaced within one tick
    /// of the clock that stamps modification times, by a file of the same size that got the freed inode back. So
    /// an identity read while its file was younger than `settled` says nothing (`isSettled`), as git does.
    /// The status log is appended to, removed when the document is replaced, and cut back only after a crash tore its
    /// last line: its inode and size tell it.
    public struct FileIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var logInode: UInt64 = 0
        var logSize: Int64 = 0

        /// The file's size in bytes, with the status log's.
        public var byteCount: Int { Int(size + logSize) }

        /// Whether the file was older than `settled` when this was read.
        public let isSettled: Bool
        static let settled: Int = 2

        init(_ status: stat, log: stat?) {
            if let log { (logInode, logSize) = (UInt64(log.st_ino), Int64(log.st_size)) }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modified = status.st_mtim
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            isSettled = now.tv_sec - modified.tv_sec > Self.settled
        }

        public static func == (a: Self, b: Self) -> Bool {
            a.sameDocument(as: b) && a.logInode == b.logInode && a.logSize == b.logSize
        }

        /// The same `defaults.json`, whatever its status log holds.
        func sameDocument(as other: Self) -> Bool {
            device == other.device && inode == other.inode && size == other.size
                && modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(inode)
            hasher.combine(modified.tv_nsec)
            hasher.combine(logSize)
        }
    }

    /// The current document, unless the file is still `known` (and `known` was settled): then `document` is `nil`
    /// and nothing was read or decoded. `identity` is `nil` when there is no file yet (and the document an empty
    /// one).
    public func read(ifChangedFrom known: FileIdentity?) throws(StoreError) -> (
        identity: FileIdentity?, document: DefaultsDocument?
    ) {
        if let known, known.isSettled, identity() == known { return (known, nil) }
        var attempt = 0
        while true {
            // The log before the document: a fold in between leaves the old log (its file unlinked, not emptied)
            // over the new document, which holds its updates already (replaying them changes nothing); the other
            // way round, no log over the old document would lose them.
            let log = try readAll(statusLogPath)
            guard let (status, bytes) = try readAll(path) else { return (nil, DefaultsDocument()) }
            var document: DefaultsDocument
            do {
                document = try DefaultsDocument.decode(bytes)
            } catch {
                throw .invalidDocument(path: path, error)
            }
            if let log, !log.bytes.isEmpty {
                do {
                    try document.replayStatusLog(log.bytes)
                } catch {
                    // Read while a writer cut back a torn line and appended after it, the bytes can join two lines:
                    // damage is what is still there when read again.
                    attempt += 1
                    if attempt < 3 {
                        usleep(2_000)
                        continue
                    }
                    throw .invalidDocument(path: statusLogPath, error)
                }
                document.markStored()
            }
            return (FileIdentity(status, log: log?.status), document)
        }
    }

    /// The file's status and bytes, or `nil` when it does not exist.
    private func readAll(_ path: String) throws(StoreError) -> (status: stat, bytes: [UInt8])? {
        switch WholeFile.read(path) {
        case .success(let file): return file
        case .failure(.system(ENOENT)): return nil
        case .failure(.system(let code)): throw .system(path: path, action: "read", errno: code)
        case .failure(.tooLarge): throw .system(path: path, action: "read", errno: EFBIG)
        }
    }

    // MARK: Changing

    /// Reads the newest document under the lock, lets `change` modify it, and writes it back crash-safely when
    /// it changed. A `change` that throws writes nothing.
    @discardableResult
    public func update<Result>(
        _ change: (inout DefaultsDocument) throws(RegistryError) -> Result
    ) throws(StoreError) -> Result {
        try update(change, beforeReplacing: { _, _ in })
    }

    /// `update`, telling `beforeReplacing` the identities of the file it read and of the one it is about to put in
    /// its place, under the writers' lock (so no other writer's) and before anyone watching the directory can see
    /// the new file: hubd tells its own status writes from `hubctl`'s changes by them, without reading 100,000
    /// sensors back. Not called when nothing changed.
    @discardableResult
    public func update<Result>(
        _ change: (inout DefaultsDocument) throws(RegistryError) -> Result,
        beforeReplacing: (_ read: FileIdentity?, _ written: FileIdentity) -> Void
    ) throws(StoreError) -> Result {
        try createDirectory(directory)
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        return try updateHoldingLock(change, beforeReplacing: beforeReplacing)
    }

    /// `update`, for a caller holding the writers' lock. The status log is folded into the document it writes, and
    /// then removed; with `folding`, the document is written even when `change` changed nothing but the log has
    /// updates.
    func updateHoldingLock<Result>(
        _ change: (inout DefaultsDocument) throws(RegistryError) -> Result, folding: Bool = false,
        beforeReplacing: (_ read: FileIdentity?, _ written: FileIdentity) -> Void
    ) throws(StoreError) -> Result {
        let (read, newest) = try self.read(ifChangedFrom: nil)
        var document = newest ?? DefaultsDocument()
        let result: Result
        do {
            result = try change(&document)
        } catch {
            throw .registry(error)
        }
        let logged = read?.logSize ?? 0
        guard document.revision != 0 || (folding && logged > 0) else { return result }
        try replaceFileAtomically(at: path, with: document.encode()) { status in
            let written = FileIdentity(status, log: nil)
            // The log is unlinked: the next append makes another.
            beforeReplacing(read, written)
        }
        if logged > 0 { removeStatusLog() }
        return result
    }

    /// The identity of the file now, without reading it; `nil` when there is none (or it can't be stat'ed).
    public func identity() -> FileIdentity? {
        try? currentIdentity()
    }

    /// `identity()`, telling a file that is not there (`nil`) from one that can't be stat'ed (thrown).
    func currentIdentity() throws(StoreError) -> FileIdentity? {
        var document = stat()
        guard stat(path, &document) == 0 else {
            if errno == ENOENT { return nil }
            throw .system(path: path, action: "read", errno: errno)
        }
        var log = stat()
        let logged = stat(statusLogPath, &log) == 0
        guard logged || errno == ENOENT else { throw .system(path: statusLogPath, action: "read", errno: errno) }
        return FileIdentity(document, log: logged ? log : nil)
    }
}

/// Why the defaults store could not be read or changed, with what to do about it.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is not a valid defaults document; it was left untouched.
    case invalidDocument(path: String, JSONSyntaxError)
    /// A system call failed (permission denied, disk full, …).
    case system(path: String, action: String, errno: Int32)
    /// Another process held the writers' lock for longer than ten seconds.
    case locked(path: String)
    /// The change itself was refused.
    case registry(RegistryError)
    /// The database holding the registry could not be reached, or did not answer in time.
    case unavailable(location: String, reason: String)
    /// The database answered with an error (a privilege missing, a table changed by hand); nothing was changed.
    case database(location: String, reason: String)

    public var description: String {
        switch self {
        case .invalidDocument(let path, let error) where path.hasPrefix("postgres://"):
            return "the registry in \(path) is not valid: \(error). It was left as it is: the sensors[n] named is the"
                + " n-th row of sensorhub_sensors by position; correct or delete that row"
        case .invalidDocument(let path, let error) where path.hasSuffix("/" + DefaultsStore.statusLogName):
            return "\(path) is not a valid status log: \(error). It was left as it is: correct or delete that line"
                + " (each line is one sensor's status, recorded since defaults.json was last written)"
        case .invalidDocument(let path, let error):
            return "\(path) is not a valid defaults document: \(error). It was left as it is: correct it by hand,"
                + " or move it aside to start with an empty registry"
        case .system(let path, let action, let code):
            let reason = String(cString: strerror(code))
            switch code {
            case EACCES, EPERM:
                return "cannot \(action) \(path): \(reason) — run as the user that owns it (or with sudo), or choose"
                    + " another state directory with --state-dir or HUB_STATE_DIR"
            case ENOSPC, EDQUOT:
                return "cannot \(action) \(path): \(reason) — the registry was not changed; free some space"
            case EROFS:
                return "cannot \(action) \(path): \(reason) — choose a writable state directory with --state-dir"
            default:
                return "cannot \(action) \(path): \(reason)"
            }
        case .locked(let path):
            return "another process has held \(path) for more than 10 s; is a hubctl or hubd stuck? Try again"
        case .registry(let error):
            return error.description
        case .unavailable(let location, let reason):
            return "cannot reach the registry at \(location): \(reason). Check that the database runs and that the"
                + " configuration's store: names it, then try again"
        case .database(let location, let reason):
            return "the registry's database at \(location) refused: \(reason). Nothing was changed"
        }
    }

    /// Whether the problem is with what the user asked (rather than with the file or the system).
    public var isInvalidInput: Bool {
        if case .registry = self { return true }
        return false
    }
}

/// The registry as the HTTP API reads it on every poll: decoded again only when the store changed.
public final class CachedDefaults: Sendable {
    private let last = Locked<(location: String, version: RegistryVersion, document: DefaultsDocument)?>(nil)

    public init() {}

    public func read(_ store: some RegistryStore) async throws(StoreError) -> DefaultsDocument {
        let known = last.withLock { $0 }.flatMap { $0.location == store.location ? $0 : nil }
        let (version, document) = try await store.read(ifChangedFrom: known?.version)
        guard let version else {
            last.withLock { $0 = nil }
            return document ?? DefaultsDocument()
        }
        // No document: the store is still the one `known` came from.
        guard let document else {
            if let known { return known.document }
            return try await store.read()
        }
        last.withLock { $0 = (store.location, version, document) }
        return document
    }
}
