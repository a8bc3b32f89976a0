import Foundation

/// The plumbing of the test kit's TCP fronts (`MQTT311Broker`, `SlowConnectFront`): a connection to a port on
/// 127.0.0.1, and bytes copied both ways between two connections until either side closes.
enum TCPRelay {
    /// A connected socket to 127.0.0.1:`port`, or nil.
    static func connect(toLoopbackPort port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Copies bytes between `client` and `server` both ways until either closes, then closes both.
    static func relay(_ client: Int32, _ server: Int32) {
        let back = DispatchSemaphore(value: 0)
        Thread {
            pump(from: server, to: client)
            back.signal()
        }.start()
        pump(from: client, to: server)
        back.wait()
        close(server)
        close(client)
    }

    /// Copies bytes until either side closes, then closes both directions.
    private static func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0, buffer.withUnsafeBytes({ write(destination, $0.baseAddress, count) }) == count else {
                break
            }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }
}

/// A TCP listener on 127.0.0.1 that serves each connection it accepts on a thread of its own, until `stop()`: what
/// the test kit's fronts (`MQTT311Broker`, `SlowConnectFront`) share.
final class TCPListener: Sendable {
    let port: Int
    private let fd: Int32

    init(backlog: Int32) throws {
        let reserved = try ReservedPort()
        (fd, port) = (reserved.adopt(), reserved.port)
        guard listen(fd, backlog) == 0 else {
            throw TestKitError("listen() failed: \(String(cString: strerror(errno)))")
        }
    }

    /// On a thread of its own: `first`, then every connection accepted handed to `serve` on a thread of its own.
    func start(first: @escaping @Sendable (TCPListener) -> Void = { _ in }, serve: @escaping @Sendable (Int32) -> Void)
    {
        Thread { [self] in
            first(self)
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else {
                    close(fd)
                    return
                }
                Thread { serve(client) }.start()
            }
        }.start()
    }

    /// The next connection, accepted on the caller's thread (-1 once stopped).
    func acceptOne() -> Int32 { accept(fd, nil, nil) }

    /// Stops accepting; connections already made go on until either side closes them.
    func stop() { shutdown(fd, Int32(SHUT_RDWR)) }
}
