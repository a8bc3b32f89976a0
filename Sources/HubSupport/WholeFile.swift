import Glibc

/// A whole file read with `open` and `read`, and when it can't be, why (`errno`): what a person named (a
/// configuration, the registry) is read the same way everywhere. Unlike `FileManager.contents(atPath:)`, a
/// character device such as `/dev/null` reads as what it holds (nothing), and a failure keeps its reason.
public enum WholeFile {
    /// Why a file could not be read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// `open`, `fstat` or `read` failed with this `errno` (`ENOENT`, `EACCES`, `EISDIR`, …).
        case system(Int32)
        /// It holds more than the reader's limit, in bytes.
        case tooLarge(limit: Int)

        /// `no such file`, `permission denied`, `is a directory`, otherwise the system's words.
        public var description: String {
            switch self {
            case .system(ENOENT): "no such file"
            case .system(EACCES): "permission denied"
            case .system(EISDIR): "is a directory"
            case .system(let code): String(cString: strerror(code)).lowercased()
            case .tooLarge(let limit): "larger than \(limit) bytes"
            }
        }
    }

    /// The file's status (from `fstat`) and its bytes; at most `limit` bytes (a device that never ends, such as
    /// `/dev/zero`, is refused rather than read until memory runs out).
    public static func read(_ path: String, limit: Int = Int.max) -> Result<(status: stat, bytes: [UInt8]), Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.system(errno)) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(.system(errno)) }
        let expected = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: (expected < limit ? expected : limit) + 1)
        var offset = 0
        while true {
            if offset == bytes.count {
                guard offset <= limit else { return .failure(.tooLarge(limit: limit)) }
                bytes.append(contentsOf: repeatElement(0, count: min(65536, limit - offset + 1)))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.system(errno))
            }
            if count == 0 { break }
            offset += count
        }
        guard offset <= limit else { return .failure(.tooLarge(limit: limit)) }
        bytes.removeLast(bytes.count - offset)
        return .success((status, bytes))
    }
}
