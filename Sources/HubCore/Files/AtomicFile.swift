import Foundation

/// Replaces the file at `path` with `bytes` so that a crash at any moment leaves the old file or the new one:
/// a temporary file (mode 0600) in the same directory → `fsync` → `rename` → `fsync` of the directory.
///
/// Call it while holding the store's lock: it also removes temporary files that earlier writers left when they
/// died, which only a lock holder may consider abandoned. An `fsync` failure fails the write, because Linux
/// reports a writeback error only once. `beforeRename` is given the new file's status once it is on disk, before
/// it takes the old one's place: its inode, size and modification time stay what they are through the rename.
///
/// `sync: false`, for a file worth nothing after a crash (the status file, rewritten every second): no `fsync`,
/// of the file or of the directory; readers still see the old file or the new one whole.
package func replaceFileAtomically(
    at path: String, with bytes: [UInt8], sync: Bool = true, beforeRename: (stat) -> Void = { _ in }
) throws(StoreError) {
    let directory = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    let prefix = ".\(name)."
    if let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
        for stale in names where stale.hasPrefix(prefix) && stale.hasSuffix(".tmp") {
            unlink("\(directory)/\(stale)")
        }
    }
    let temporary = "\(directory)/\(prefix)\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .system(path: temporary, action: "create", errno: errno) }
    var open = true
    var renamed = false
    defer {
        if open { close(fd) }
        if !renamed { unlink(temporary) }
    }
    takeDirectoryOwner(fd, directory)
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeBytes { buffer in
            write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if count < 0 {
            if errno == EINTR { continue }
            throw .system(path: temporary, action: "write", errno: errno)
        }
        offset += count
    }
    if sync, fsync(fd) != 0 { throw .system(path: temporary, action: "flush to disk", errno: errno) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { throw .system(path: temporary, action: "write", errno: errno) }
    beforeRename(status)
    open = false
    guard close(fd) == 0 else { throw .system(path: temporary, action: "write", errno: errno) }
    guard rename(temporary, path) == 0 else { throw .system(path: path, action: "replace", errno: errno) }
    renamed = true
    guard sync else { return }
    try syncDirectory(directory)
}

/// Flushes `directory`'s entries to disk: a file created or renamed in it is there after a crash.
package func syncDirectory(_ directory: String) throws(StoreError) {
    let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw .system(path: directory, action: "open", errno: errno) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw .system(path: directory, action: "flush to disk", errno: errno) }
}

/// Run as root (`sudo hubctl …` against the store of hubd's own user), gives a new file the state directory's
/// owner, so that hubd can still read what root wrote.
package func takeDirectoryOwner(_ fd: Int32, _ directory: String) {
    guard geteuid() == 0 else { return }
    var status = stat()
    guard stat(directory, &status) == 0, status.st_uid != 0 || status.st_gid != 0 else { return }
    _ = fchown(fd, status.st_uid, status.st_gid)
}

/// Creates `directory` (and its parents) with mode 0700 when it does not exist.
package func createDirectory(_ directory: String) throws(StoreError) {
    var path = ""
    for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
        path += "/" + component
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .system(path: path, action: "create", errno: errno)
        }
    }
    var status = stat()
    guard stat(directory, &status) == 0 else { throw .system(path: directory, action: "use", errno: errno) }
    guard status.st_mode & S_IFMT == S_IFDIR else { throw .system(path: directory, action: "use", errno: ENOTDIR) }
}

/// Takes an exclusive `flock` on `lockPath` (created 0600), waiting at most ten seconds for another process to let
/// go of it; close the returned descriptor to release it.
package func acquireLock(_ lockPath: String, directory: String) throws(StoreError) -> Int32 {
    let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .system(path: lockPath, action: "open", errno: errno) }
    takeDirectoryOwner(fd, directory)
    let deadline = ContinuousClock.now + .seconds(10)
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
        guard errno == EWOULDBLOCK || errno == EINTR else {
            let code = errno
            close(fd)
            throw .system(path: lockPath, action: "lock", errno: code)
        }
        guard ContinuousClock.now < deadline else {
            close(fd)
            throw .locked(path: lockPath)
        }
        usleep(2_000)
    }
    return fd
}
