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
