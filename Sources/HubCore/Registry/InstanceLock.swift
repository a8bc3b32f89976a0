import Foundation

/// The state directory's `hubd.lock`: an exclusive `flock` hubd holds for its whole life, so that a second hubd on
/// the same directory stops at once instead of replaying the same journal and knocking the first off the broker
/// (both use the same client id). The kernel lets go of it when the process ends, however it ends; the file keeps
/// the holder's PID for the message. `hubctl` never takes it: it works beside a running hubd.
public struct InstanceLock: Sendable {
    public static let name = "hubd.lock"

    /// The open descriptor: closing it (or the process ending) releases the lock.
    public let descriptor: Int32
    public let path: String

    /// Why the lock could not be taken.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// Another process holds it: its PID as the file says, when it says one.
        case held(path: String, pid: Int32?)
        case system(StoreError)

        /// Whether another process holds it (rather than the file being out of reach).
        public var isHeld: Bool {
            if case .held = self { return true }
            return false
        }

        public var description: String {
            switch self {
            case .held(let path, let pid):
                let directory = (path as NSString).deletingLastPathComponent
                return "another hubd\(pid.map { " (pid \($0))" } ?? "") is running on the state directory \(directory)"
                    + " (it holds \(path)); stop it first, or give this one another state directory (--state-dir)"
            case .system(let error):
                return error.description
            }
        }
    }

    /// Takes the lock of `directory` (creating the directory, mode 0700, if needed) and writes this process's PID
    /// into the file; fails at once, naming the holder, when another process has it.
    public static func acquire(directory: String) throws(Failure) -> InstanceLock {
        do {
            try createDirectory(directory)
        } catch {
            throw .system(error)
        }
        let path = "\(directory)/\(name)"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(.system(path: path, action: "open", errno: errno)) }
        takeDirectoryOwner(fd, directory)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            let holder = Self.pid(in: fd)
            close(fd)
            if code == EWOULDBLOCK { throw .held(path: path, pid: holder) }
            throw .system(.system(path: path, action: "lock", errno: code))
        }
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) != 0 || pwrite(fd, text, text.count, 0) != text.count {
            let code = errno
            close(fd)
            throw .system(.system(path: path, action: "write", errno: code))
        }
        return InstanceLock(descriptor: fd, path: path)
    }

    /// The PID the lock file names, if any.
    public static func holder(directory: String) -> Int32? {
        let fd = open("\(directory)/\(name)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return pid(in: fd)
    }

    private static func pid(in fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Lets go of the lock (the process ending does the same).
    public func release() {
        close(descriptor)
    }
}
