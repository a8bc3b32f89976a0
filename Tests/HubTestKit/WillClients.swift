import Foundation

/// Many sensors' firmware as a broker sees it in a power cut: one MQTT 3.1.1 connection each (raw sockets, so each
/// is only a socket: hundreds fit in a test), each with a last will (`offline`, retained, QoS 1) on its topic, each
/// having published its status (`status`, retained, QoS 1, as firmware does) once connected. What ends them is the
/// cut:
/// - `dropAll()`: every connection ends at once (the broker publishes every will in one go);
/// - `drop(over:)`: the connections end one by one, evenly over a time;
/// - `fallSilent()`: nothing more is sent and nothing closed, as when the power goes and the Wi-Fi with it: the
///   broker gives each up 1.5 keepalives after the last packet it had from it, so the wills come spread over a
///   keepalive when the clients connected spread over one (`connect(spreadOver:)`).
public final class WillClients: @unchecked Sendable {
    public let topics: [String]
    private var sockets: [Int32] = []
    private let lock = NSLock()

    /// What each publishes once connected.
    public let status: String

    public init(topics: [String], status: String = "closed") {
        self.topics = topics
        self.status = status
    }

    /// Connects every client to `host:port` with `keepalive` seconds, one after another, spread evenly over
    /// `spread` (none: as fast as the broker answers), each publishing its status retained once connected.
    public func connect(host: String, port: Int, keepalive: Int = 60, spreadOver spread: Duration? = nil) async throws {
        let gap = spread.map { $0 / max(1, topics.count) }
        let start = ContinuousClock.now
        for (index, topic) in topics.enumerated() {
            if let gap { try await Task.sleep(until: start + gap * index) }
            let fd = try Self.open(host: host, port: port)
            lock.withLock { sockets.append(fd) }
            try Self.send(fd, Self.connectPacket(client: "will-\(index)-\(getpid())", topic: topic, keepalive: keepalive))
            guard try Self.read(fd, 4) == [0x20, 0x02, 0x00, 0x00] else {
                throw TestKitError("the broker refused \(topic)'s connection")
            }
            let packetID = UInt16(index % 65_000 + 1)
            try Self.send(fd, Self.publishPacket(topic: topic, payload: status, packetID: packetID))
            guard try Self.read(fd, 4) == [0x40, 0x02, UInt8(packetID >> 8), UInt8(packetID & 0xff)] else {
                throw TestKitError("no PUBACK for \(topic)'s status")
            }
        }
    }

    /// Every connection ends at once, without a DISCONNECT: every will is published.
    public func dropAll() {
        for fd in lock.withLock({ sockets }) { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        closeAll()
    }

    /// The connections end one by one, evenly over `duration`.
    public func drop(over duration: Duration) async throws {
        let all = lock.withLock { sockets }
        let gap = duration / max(1, all.count)
        let start = ContinuousClock.now
        for (index, fd) in all.enumerated() {
            try await Task.sleep(until: start + gap * index)
            Glibc.shutdown(fd, Int32(SHUT_RDWR))
        }
        closeAll()
    }

    /// Nothing more is sent, nothing closed: the broker ends each connection when its keepalive runs out.
    public func fallSilent() {}

    /// Closes what is left (once the broker gave the silent ones up, or at the end of a test).
    public func closeAll() {
        let all = lock.withLock {
            defer { sockets = [] }
            return sockets
        }
        for fd in all { close(fd) }
    }

    deinit { closeAll() }

    // MARK: - MQTT 3.1.1, just enough

    static func connectPacket(client: String, topic: String, keepalive: Int) -> [UInt8] {
        var variable: [UInt8] = string("MQTT") + [4]
        // Clean session, a will, its QoS 1, retained.
        variable.append(0b0010_1110)
        variable += [UInt8(keepalive >> 8), UInt8(keepalive & 0xff)]
        let payload = string(client) + string(topic) + string("offline")
        return [0x10] + length(variable.count + payload.count) + variable + payload
    }

    static func publishPacket(topic: String, payload: String, packetID: UInt16) -> [UInt8] {
        let body = string(topic) + [UInt8(packetID >> 8), UInt8(packetID & 0xff)] + Array(payload.utf8)
        // PUBLISH, QoS 1, retained.
        return [0x33] + length(body.count) + body
    }

    static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes
    }

    static func length(_ value: Int) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        repeat {
            var byte = UInt8(value % 128)
            value /= 128
            if value > 0 { byte |= 0x80 }
            out.append(byte)
        } while value > 0
        return out
    }

    static func open(host: String, port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestKitError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw TestKitError("cannot connect to \(host):\(port): errno \(errno)")
        }
        return fd
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, bytes.count - sent) }
            guard count > 0 else { throw TestKitError("write failed: errno \(errno)") }
            sent += count
        }
    }

    static func read(_ fd: Int32, _ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, count - got) }
            guard n > 0 else { throw TestKitError("the broker closed the connection (errno \(errno))") }
            got += n
        }
        return buffer
    }
}
