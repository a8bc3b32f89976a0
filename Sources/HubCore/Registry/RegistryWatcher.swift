import Dispatch
import Foundation
import Logging

/// Tells when `defaults.json` may have changed: inotify on the state directory (the store is replaced by rename,
/// so the directory is what to watch), or a stat() every second where inotify is not available.
package enum RegistryWatcher {
    /// A signal for every change; bursts collapse into one pending signal. Ends when its consumer goes away.
    /// `appended`: files beside the store that a writer keeps open and appends to (the alert book's log), watched for
    /// each write; one that is a link to a log kept in memory (low wear, `MemoryLogs`) is written where it points,
    /// so that directory is watched too.
    package static func changes(of store: String, appended: [String] = [], logger: Logger) -> AsyncStream<Void> {
        let directory = (store as NSString).deletingLastPathComponent
        let targets = appended.compactMap { MemoryLogs.target(of: $0) }
        let names = Set(([store] + appended + targets).map { ($0 as NSString).lastPathComponent })
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let mask = UInt32(
            IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_CREATE | (appended.isEmpty ? 0 : IN_MODIFY))
        guard fd >= 0, inotify_add_watch(fd, directory, mask) >= 0 else {
            if fd >= 0 { close(fd) }
            logger.warning(
                "inotify is not available; checking the registry every second",
                metadata: ["error": "\(String(cString: strerror(errno)))"])
            let poller = Task { await poll([store] + appended, continuation) }
            continuation.onTermination = { _ in poller.cancel() }
            return stream
        }
        for elsewhere in Set(targets.map { ($0 as NSString).deletingLastPathComponent }) where elsewhere != directory {
            if inotify_add_watch(fd, elsewhere, mask) < 0 {
                logger.warning(
                    "cannot watch the logs kept in memory; their changes are seen at the next change beside the store",
                    metadata: ["directory": "\(elsewhere)", "error": "\(String(cString: strerror(errno)))"])
            }
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "registry-watcher"))
        source.setEventHandler {
            if !readEvents(fd).isDisjoint(with: names) { continuation.yield() }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
        let cancellable = Cancellable(source: source)
        continuation.onTermination = { _ in cancellable.source.cancel() }
        return stream
    }

    /// A dispatch source's `cancel()` may be called from any thread.
    private struct Cancellable: @unchecked Sendable {
        let source: any DispatchSourceRead
    }

    /// The names of the files the pending inotify events are about.
    private static func readEvents(_ fd: Int32) -> Set<String> {
        var names = Set<String>()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return names }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = buffer.withUnsafeBytes { bytes in
                    Int(bytes.load(fromByteOffset: offset + 12, as: UInt32.self))
                }
                let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)]
                names.insert(String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self))
                offset += header + length
            }
        }
    }

    /// The fallback: compares the files' inodes, sizes and modification times every second.
    private static func poll(_ paths: [String], _ continuation: AsyncStream<Void>.Continuation) async {
        func signature() -> [Int] {
            paths.flatMap { path -> [Int] in
                var status = stat()
                guard stat(path, &status) == 0 else { return [-1] }
                return [Int(status.st_ino), Int(status.st_size), status.st_mtim.tv_sec, status.st_mtim.tv_nsec]
            }
        }
        var last = signature()
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let current = signature()
            if current != last {
                last = current
                continuation.yield()
            }
        }
    }
}
