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
