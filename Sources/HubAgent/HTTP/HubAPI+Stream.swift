import Foundation
import HTTPTypes
import HubCore
import HubNotify
import HubSupport
import Hummingbird
import NIOCore
import ServiceLifecycle

/// What `/api/v1/stream` watches: the hub's counters and the state files a page is drawn from. Each open stream
/// looks once a second (a few integers and four `stat` calls) and tells its page only when something moved, so a
/// dashboard left open on a quiet hub costs the hub next to nothing, where polling made it answer the whole sensor
/// list every two seconds (`bench/dashboard.sh` measures both).
final class ChangeFeed: Sendable {
    let files: [String]
    /// Streams open now: at most `maximum`, each a task waking once a second.
    let open = Locked(0)
    static let maximum = 32
    /// A stream ends after this many seconds; the browser's EventSource opens the next at once.
    let lifetime: Int
    static let lifetime = 3600
    /// A comment this often keeps proxies from closing a quiet stream, and finds a page that left.
    static let keepalive = 25

    init(stateDirectory: String, lifetime: Int = ChangeFeed.lifetime) {
        self.lifetime = lifetime
        let names = ["defaults.json", DefaultsStore.statusLogName, AlertFiles.bookName, AlertFiles.logName]
        files = (names + ["alert-requests.jsonl"]).map { "\(stateDirectory)/\($0)" }
    }

    /// The files' sizes and modification times, as one number.
    func filesPrint() -> Int {
        var hasher = Hasher()
        for path in files {
            var info = stat()
            if stat(path, &info) == 0 {
                hasher.combine(info.st_size)
                hasher.combine(info.st_mtim.tv_sec)
                hasher.combine(info.st_mtim.tv_nsec)
                hasher.combine(info.st_ino)
            } else {
                hasher.combine(-1)
            }
        }
        return hasher.finalize()
    }
}

extension HubAPI {
    /// What a page shows may have changed when this changes: statuses taken, the connection, the backends'
    /// counts, the alerts' counts, the book's revision, the registry's and the book's files.
    func changePrint() -> Int {
        let now = snapshot(false)
        var hasher = Hasher()
        hasher.combine(now.counters.messages)
        hasher.combine(now.counters.changes)
        hasher.combine(now.connection)
        hasher.combine(now.sensorCount)
        hasher.combine(now.notifications.backends)
        hasher.combine(now.notifications.alerts)
        // hubd's book in memory: its files are written only when it must be durable.
        hasher.combine(alerts.revision)
        hasher.combine(changes.filesPrint())
        return hasher.finalize()
    }

    /// `GET /api/v1/stream`: server-sent events. `change` when something a page shows may have changed (the page
    /// fetches what it shows again); nothing else is sent but comments. 503 past `ChangeFeed.maximum` streams.
    func stream() -> Response {
        guard changes.open.withLock({ $0 < ChangeFeed.maximum }) else {
            return json(["error": "too many pages are following the hub; try again later"], status: .serviceUnavailable)
        }
        let body = ResponseBody { [self] writer in
            changes.open.withLock { $0 += 1 }
            defer { changes.open.withLock { $0 -= 1 } }
            var last = changePrint()
            try await writer.write(ByteBuffer(string: "retry: 3000\nevent: change\ndata: {}\n\n"))
            var quiet = 0
            for _ in 1...changes.lifetime {
                try await Task.sleep(for: .seconds(1))
                if Task.isShuttingDownGracefully { break }
                let now = changePrint()
                if now != last {
                    last = now
                    quiet = 0
                    try await writer.write(ByteBuffer(string: "event: change\ndata: {}\n\n"))
                } else {
                    quiet += 1
                    if quiet >= ChangeFeed.keepalive {
                        quiet = 0
                        try await writer.write(ByteBuffer(string: ": still here\n\n"))
                    }
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ], body: body)
    }
}
