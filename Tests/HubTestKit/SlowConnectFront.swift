import Foundation
import Synchronization

/// A TCP front of a broker whose connections complete only when the client sends its SYN again (Linux: after a
/// second), as across a network a connection is not made at once: a client's non-blocking `connect()` is still in
/// progress when it starts to talk, so a TLS client's first `SSL_connect` finds the socket not writable yet. On
/// 127.0.0.1 a connection is otherwise made within `connect()` itself.
///
/// The listener's accept queue (backlog 0) is held full by a connection of the front's own for `hold`, so the
/// kernel drops the SYNs that come meanwhile; then the front takes every connection and relays it to the broker.
public final class SlowConnectFront: Sendable {
    public let port: Int
    private let listener: Int32
    private let upstream: Int
    private let taken = Atomic<Int>(0)

    /// Connections relayed to the broker so far.
    public var connections: Int { taken.load(ordering: .relaxed) }

    public init(before upstreamPort: Int, hold: Duration = .milliseconds(500)) throws {
        let reserved = try ReservedPort()
        (listener, port, upstream) = (reserved.adopt(), reserved.port, upstreamPort)
        guard listen(listener, 0) == 0 else {
            throw TestKitError("listen() failed: \(String(cString: strerror(errno)))")
        }
        guard let filler = TCPRelay.connect(toLoopbackPort: port) else {
            throw TestKitError("could not fill the front's accept queue: \(String(cString: strerror(errno)))")
        }
        let seconds = Double(hold.components.seconds) + Double(hold.components.attoseconds) / 1e18
        Thread { [self] in
            Thread.sleep(forTimeInterval: seconds)
            close(accept(listener, nil, nil))
            close(filler)
            acceptLoop()
        }.start()
    }

    /// Stops accepting; connections already made go on until either side closes them.
    public func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                close(listener)
                return
            }
            guard let server = TCPRelay.connect(toLoopbackPort: upstream) else {
                close(client)
                continue
            }
            taken.add(1, ordering: .relaxed)
            Thread { TCPRelay.relay(client, server) }.start()
        }
    }
}
