import Foundation
import HubTestKit

/// A Unix datagram socket standing in for systemd's notification socket.
final class DatagramListener: Sendable {
    let path: String
    let messages: Inbox<String>
    private let directory: TemporaryDirectory
    private let fd: Int32

    init() throws {
        let directory = try TemporaryDirectory(prefix: "notify")
        let path = directory.file("notify.sock")
        self.directory = directory
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw TestKitError("cannot bind \(path): \(String(cString: strerror(errno)))") }
        let stream = AsyncStream<String> { continuation in
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { break }
                    continuation.yield(String(decoding: buffer[..<count], as: UTF8.self))
                }
                continuation.finish()
            }
        }
        messages = Inbox.consuming(stream)
    }

    /// Ends the reading thread.
    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
