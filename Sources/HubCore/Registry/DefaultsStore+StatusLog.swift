import Foundation

/// The status log: what hubd learns of its sensors, appended to `defaults.statuses` as one line per sensor
/// (`SensorStatusUpdate`), instead of rewriting `defaults.json`.
///
/// A flush of N changed sensors writes N lines (about 110 bytes each) and one `fsync`, however large the registry:
/// rewriting the document took 2.9 s at 100,000 sensors, and on a Raspberry Pi's SD card wrote the whole file every
/// second of activity. Every reader replays the log over the document (`read`), so `hubctl` and the HTTP API see
/// the statuses as before. Any other change (`update`, from hubctl or hubd) writes the document with the log folded
/// in and removes the log; so does an append that would make the log longer than a quarter of the document (and
/// than `statusLogLimit`): for each byte logged, at most four of the document are written again, and a reader
/// replays at most about 37,000 lines at 100,000 sensors (0.26 s more than the document alone) or 2,200 below
/// about 5,000 sensors (30 ms; `bench/store.sh`, `bench/results/store-2026-11-28-statuslog.md`).
///
/// Crash safety: the lines are appended and `fsync`ed under the writers' lock (a new log's directory entry too); a
/// line torn by a crash has no newline: readers leave it out, and the next append cuts it off. A fold renames the new
/// document into place before it removes the log, so a crash between the two leaves updates the document holds
/// already: replaying them changes nothing (an update no newer than the sensor's stored status is ignored).
extension DefaultsStore {
    public static let statusLogName = "defaults.statuses"

    /// Below this, the log is not folded in however small the document (a few hundred sensors' document is smaller
    /// than one burst of their statuses). Replaying a line takes 6–13 µs.
    static let statusLogLimit = 1 << 18

    /// In low wear a link to the log in memory (`MemoryLogs`): the log's own path, which a fold unlinks and the
    /// next append makes again.
    public var statusLogPath: String {
        let path = directory + "/" + Self.statusLogName
        return MemoryLogs.target(of: path) ?? path
    }

    /// Records what hubd learnt of some sensors: appended to the status log, or folded into the document with the
    /// log when the log would outgrow it. An update for a sensor that is gone changes nothing when replayed.
    /// `beforeReplacing` is told the identities before and after, as `update` does, before the store changes.
    /// Not `sync`: the lines are left to the kernel's writeback, for `syncStatusLog` to flush (a fold is flushed
    /// whatever `sync` says).
    public func record(
        _ updates: [SensorStatusUpdate], sync: Bool = true,
        beforeReplacing: (_ read: FileIdentity?, _ written: FileIdentity) -> Void
    ) throws(StoreError) {
        guard !updates.isEmpty else { return }
        try createDirectory(directory)
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        // No document: no sensor to record anything of.
        guard let read = try currentIdentity() else { return }
        var lines: [UInt8] = []
        lines.reserveCapacity(updates.count * 160)
        for update in updates { lines += update.line }
        if Int(read.logSize) + lines.count > max(Self.statusLogLimit, Int(read.size) / 4) {
            try updateHoldingLock(
                { document throws(RegistryError) in for update in updates { document.record(update) } },
                folding: true, beforeReplacing: beforeReplacing)
            return
        }
        let created = read.logInode == 0
        let fd = open(statusLogPath, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(path: statusLogPath, action: "open", errno: errno) }
        defer { close(fd) }
        takeDirectoryOwner(fd, directory)
        if created { try syncDirectory(directory) }
        // A line torn by a crash is cut off, not ended: ended, it would be a damaged line every reader stops at. Its
        // update was never acknowledged to the journal, which hands it over again.
        let end = try completeLinesEnd(fd)
        var written = read
        (written.logInode, written.logSize) = (UInt64(try status(fd).st_ino), Int64(end + lines.count))
        beforeReplacing(read, written)
        // Nothing half-written stays (a full disk): the next flush records these again. Should the cut fail, what is
        // left has no newline, so readers leave it out and the next append cuts it.
        try AppendFile.write(lines, to: fd, path: statusLogPath) { _ in _ = ftruncate(fd, end) }
        if sync { try AppendFile.sync(fd, path: statusLogPath) }
    }

    /// Flushes the status log to disk: every line appended without `sync` is then durable. A log folded in since
    /// was flushed with the document that holds its lines.
    public func syncStatusLog() throws(StoreError) {
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        let fd = open(statusLogPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw .system(path: statusLogPath, action: "open", errno: errno)
        }
        defer { close(fd) }
        try AppendFile.sync(fd, path: statusLogPath)
    }

    private func status(_ fd: Int32) throws(StoreError) -> stat {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .system(path: statusLogPath, action: "read", errno: errno) }
        return status
    }

    /// Where the log's last complete line ends, once anything after it is cut off.
    private func completeLinesEnd(_ fd: Int32) throws(StoreError) -> Int {
        let size = try status(fd).st_size
        var end = size
        var chunk = [UInt8](repeating: 0, count: 4096)
        search: while end > 0 {
            let start = max(0, end - chunk.count)
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, end - start, start) }
            guard count == end - start else { throw .system(path: statusLogPath, action: "read", errno: errno) }
            for index in stride(from: count - 1, through: 0, by: -1) where chunk[index] == UInt8(ascii: "\n") {
                end = start + index + 1
                break search
            }
            end = start
        }
        if end != size, ftruncate(fd, end) != 0 {
            throw .system(path: statusLogPath, action: "write", errno: errno)
        }
        return end
    }

    /// Folds the status log into the document when the log is kept in memory (low wear, `MemoryLogs`): hubd does so
    /// as it stops, so that a reboot, which empties the memory, loses none of its statuses.
    public func foldStatusLogInMemory() throws(StoreError) {
        guard MemoryLogs.target(of: directory + "/" + Self.statusLogName) != nil else { return }
        let lock = try acquireLock(lockPath, directory: directory)
        defer { close(lock) }
        try updateHoldingLock({ _ in }, folding: true, beforeReplacing: { _, _ in })
    }

    /// Removes the log once the document holds its updates. Unlinked rather than emptied: a reader that opened it
    /// reads it whole, and never the next log's lines after this one's. A failure (or a crash before the directory
    /// reaches the disk) leaves updates to be replayed again, which changes nothing; the next fold removes it.
    func removeStatusLog() {
        unlink(statusLogPath)
    }
}
