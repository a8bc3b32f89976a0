import Foundation

/// An append-only file of lines (the journal's, the outbox's): opened for appending, written whole or not at all
/// as far as a reader can tell, flushed to disk when asked.
package enum AppendFile {
    /// Opens (creating, mode 0600) `path` in `directory` for appending; a torn last line left by a crash is ended,
    /// so the next append starts a line of its own.
    package static func open(_ path: String, in directory: String) throws(StoreError) -> Int32 {
        try createDirectory(directory)
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(path: path, action: "open", errno: errno) }
        takeDirectoryOwner(fd, directory)
        var info = stat()
        var last: UInt8 = 0
        if fstat(fd, &info) == 0, info.st_size > 0, pread(fd, &last, 1, info.st_size - 1) == 1,
            last != UInt8(ascii: "\n")
        {
            _ = "\n".withCString { Glibc.write(fd, $0, 1) }
        }
        return fd
    }

    /// What the file at `path` holds (nothing when there is no file).
    package static func contents(_ path: String) -> Data {
        FileManager.default.contents(atPath: path) ?? Data()
    }

    /// Writes `bytes` (whole lines) at the end of `fd`, then `fsync`s when `sync`. A write that fails half-way
    /// ends the line it tore, so the next append is not glued to it; an `fsync` error is an error (Linux reports a
    /// writeback failure once).
    package static func append(_ bytes: [UInt8], to fd: Int32, path: String, sync: Bool) throws(StoreError) {
        try write(bytes, to: fd, path: path) { written in
            if written > 0 { _ = "\n".withCString { Glibc.write(fd, $0, 1) } }
        }
        if sync { try self.sync(fd, path: path) }
    }

    /// Writes all of `bytes` to `fd`; when a write fails, `failed` is told how many were written before it, and
    /// the error is thrown.
    package static func write(
        _ bytes: [UInt8], to fd: Int32, path: String, failed: (_ written: Int) -> Void
    ) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                failed(offset)
                throw .system(path: path, action: "write", errno: code)
            }
            offset += count
        }
    }

    /// Flushes what was written to `fd` to disk; an error is an error (Linux reports a writeback failure once).
    /// Allocates `fd`'s blocks ahead of its appends, `step` bytes at a time, when an append of `count` bytes at
    /// `size` would pass `reserved` (what is allocated already); returns what is allocated now. Appended a line at a
    /// time and flushed every few seconds, a file had ext4 allocate a block or two at each `fsync`, writing its
    /// block bitmap and group descriptor again each time: 7 of the 12 filesystem blocks a home's hub dirtied a
    /// minute (perf, `ext4:ext4_allocate_blocks`; `bench/home.sh`). The size readers see does not change
    /// (`FALLOC_FL_KEEP_SIZE`); truncating or replacing the file frees what it did not use. Nothing is reserved
    /// where the disk has less than `spare` left, lest a nearly full disk be filled sooner; a filesystem that can't
    /// (`EOPNOTSUPP`) is skipped until the next step.
    package static func reserve(
        _ fd: Int32, size: Int, appending count: Int, reserved: Int, step: Int = 1 << 18, spare: Int = 64 << 20
    ) -> Int {
        guard size + count > reserved else { return reserved }
        let end = ((size + count) / step + 1) * step
        var disk = statvfs()
        guard fstatvfs(fd, &disk) == 0, Int(disk.f_bavail) * Int(disk.f_frsize) > end - size + spare else {
            return end
        }
        _ = fallocate?(fd, 0x01 /* FALLOC_FL_KEEP_SIZE */, off_t(size), off_t(end - size))
        return end
    }

    /// glibc's `fallocate`, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`).
    private static let fallocate: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32, off_t, off_t) -> Int32).self)
    }()

    package static func sync(_ fd: Int32, path: String) throws(StoreError) {
        if fsync(fd) != 0 { throw .system(path: path, action: "flush to disk", errno: errno) }
    }

    /// Appends `bytes` as `append(_:to:path:sync:)` does to the descriptor `fd` holds, first opening `path` when it
    /// holds none (-1: closed by a compaction, and whichever file is at the path now holds everything); `fd` keeps
    /// the descriptor opened, even when the write then fails.
    package static func append(
        _ bytes: [UInt8], reopening fd: inout Int32, path: String, in directory: String, sync: Bool
    ) throws(StoreError) {
        if fd < 0 { fd = try open(path, in: directory) }
        try append(bytes, to: fd, path: path, sync: sync)
    }

    /// The non-empty lines of `contents`.
    package static func lines(_ contents: Data) -> [Data.SubSequence] {
        contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
    }
}
