import Foundation
import Synchronization

/// A broker that speaks only MQTT 3.1.1, as Mosquitto before 1.6 and several embedded brokers do: a TCP front of a
/// real `MosquittoBroker` that answers an MQTT 5 CONNECT as MQTT 3.1.1 says to (a CONNACK with return code 1,
/// "unacceptable protocol version", then the connection closed) and passes every other connection through.
public final class MQTT311Broker: Sendable {
    public var port: Int { listener.port }
    private let listener: TCPListener
    private let upstream: Int
    private let refusals = Atomic<Int>(0)

    /// MQTT 5 CONNECTs refused so far.
    public var refusedV5: Int { refusals.load(ordering: .relaxed) }

    public init(before broker: MosquittoBroker) throws {
        (listener, upstream) = (try TCPListener(backlog: 16), broker.port)
        listener.start { [self] client in serve(client) }
    }

    /// Stops accepting; connections already made go on until either side closes them.
    public func stop() { listener.stop() }

    private func serve(_ client: Int32) {
        // The whole CONNECT: its fixed header, remaining length (1–4 bytes) and body, whose protocol level is byte 7.
        var head: [UInt8] = []
        func take(_ count: Int) -> Bool {
            var byte: UInt8 = 0
            for _ in 0..<count {
                guard read(client, &byte, 1) == 1 else { return false }
                head.append(byte)
            }
            return true
        }
        var remaining = 0
        var complete = take(1)
        for shift in stride(from: 0, to: 28, by: 7) where complete {
            complete = take(1)
            remaining |= Int(head.last! & 0x7F) << shift
            if head.last! & 0x80 == 0 { break }
        }
        let body = head.count
        guard complete, remaining >= 7, take(remaining) else {
            close(client)
            return
        }
        if head[body + 6] == 5 {
            refusals.add(1, ordering: .relaxed)
            // Answered, then closed without a reset: everything sent is read first.
            _ = [UInt8](arrayLiteral: 0x20, 0x02, 0x00, 0x01).withUnsafeBytes { write(client, $0.baseAddress, 4) }
            shutdown(client, Int32(SHUT_WR))
            var sink = [UInt8](repeating: 0, count: 512)
            while read(client, &sink, sink.count) > 0 {}
            close(client)
            return
        }
        guard let server = TCPRelay.connect(toLoopbackPort: upstream) else {
            close(client)
            return
        }
        guard head.withUnsafeBytes({ write(server, $0.baseAddress, head.count) }) == head.count else {
            close(server)
            close(client)
            return
        }
        TCPRelay.relay(client, server)
    }
}
