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
    public var port: Int { listener.port }
    private let listener: TCPListener
    private let taken = Atomic<Int>(0)

    /// Connections relayed to the broker so far.
    public var connections: Int { taken.load(ordering: .relaxed) }

    public init(before upstream: Int, hold: Duration = .milliseconds(500)) throws {
        listener = try TCPListener(backlog: 0)
        guard let filler = TCPRelay.connect(toLoopbackPort: listener.port) else {
            throw TestKitError("could not fill the front's accept queue: \(String(cString: strerror(errno)))")
        }
        let seconds = Double(hold.components.seconds) + Double(hold.components.attoseconds) / 1e18
        listener.start(
            first: { listener in
                Thread.sleep(forTimeInterval: seconds)
                close(listener.acceptOne())
                close(filler)
            },
            serve: { [self] client in
                guard let server = TCPRelay.connect(toLoopbackPort: upstream) else {
                    close(client)
                    return
                }
                taken.add(1, ordering: .relaxed)
                TCPRelay.relay(client, server)
            })
    }

    /// Stops accepting; connections already made go on until either side closes them.
    public func stop() { listener.stop() }
}
