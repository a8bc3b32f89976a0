import Foundation
import HubCore

/// `file`: appends each notification as one JSON line (an audit trail). The file is opened for each line, so
/// logrotate can move it away at any time.
struct FileNotifier: Notifier {
    let path: String
    /// `fsync` after each line.
    let sync: Bool

    /// Up to 512 lines in one `write`: a burst of changes costs one open, one write and one close.
    var batchSize: Int { 512 }

    /// No timer per attempt: a write that never suspends can't be cut short by one, and the queue's timeout task
    /// cost a timer and two child tasks per line (issue 38).
    var enforcesTimeout: Bool { true }

    func send(_ notification: Notification) async -> DeliveryResult {
        await send(batch: [notification])[0]
    }

    func send(batch: [Notification]) async -> [DeliveryResult] {
        var line: [UInt8] = []
        line.reserveCapacity(batch.count * 400)
        for notification in batch {
            line += notification.json
            line.append(UInt8(ascii: "\n"))
        }
        let result = append(line)
        return Array(repeating: result, count: batch.count)
    }

    private func append(_ line: [UInt8]) -> DeliveryResult {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return failure("open", errno) }
        defer { close(fd) }
        // One write: appends of a whole line don't interleave with another writer's.
        var offset = 0
        while offset < line.count {
            let count = line.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return failure("write", errno)
            }
            offset += count
        }
        if sync && fsync(fd) != 0 { return failure("flush", errno) }
        return .delivered
    }

    private func failure(_ action: String, _ code: Int32) -> DeliveryResult {
        let reason = "cannot \(action) \(path): \(String(cString: strerror(code)))"
        // A missing directory or a permission can be fixed while hubd runs; retrying costs little.
        return .retry(reason: reason)
    }
}

extension FileNotifier {
    struct Settings: BackendSettings {
        static let type = "file"
        static let summary =
            "Each notification as one JSON line appended to a file: an audit trail. The file is opened for each write,"
            + " so logrotate can move it away."
        static let keys = [
            ConfigKey(
                "path", "file path",
                "Required. The file to append to, made when missing (mode 0640); a relative path is taken from the"
                    + " configuration file's directory. A write that fails is retried."),
            ConfigKey(
                "fsync", "true or false", default: "false",
                "Flush the file to disk after each write before the notification counts as delivered."),
        ]
        var path: String
        var sync: Bool

        init(_ node: ConfigNode) throws(ConfigurationError) {
            path = try node["path"].required { try $0.filePath() }
            sync = try node["fsync"].bool() ?? false
        }

        func makeNotifier(_ context: BackendContext) -> any Notifier {
            FileNotifier(path: path, sync: sync)
        }
    }
}
