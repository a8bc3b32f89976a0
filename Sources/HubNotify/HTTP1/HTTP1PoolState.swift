import NIOCore

/// Which kept-alive connections a backend's HTTP/1.1 client holds, idle or in use, per origin: a value type with no
/// I/O (generic over the connection, so tests use numbers), so that reuse, the idle bound, expiry and shutdown each
/// have a unit test. The client does what its answers say (close these, connect a new one).
///
/// The pool does not bound connections in use: the backend's queue runs at most `concurrency` attempts at once, one
/// connection each, so it never holds more than that; it keeps at most `maximumIdle` idle ones per origin.
struct HTTP1PoolState<Connection: Hashable> {
    private struct Idle {
        var connection: Connection
        var since: NIODeadline
    }

    /// Idle connections per origin, the most recently used last (taken first: it is the least likely to have been
    /// closed by the server's idle timeout).
    private var idle: [HTTP1Target.Origin: [Idle]] = [:]
    private var inUse: Set<Connection> = []
    private(set) var isShutDown = false
    let maximumIdle: Int
    /// A connection idle for longer is closed rather than used: servers close theirs after a while (often 5 s to
    /// 2 min), and a request written just as the server closes fails.
    let idleTimeout: TimeAmount

    init(maximumIdle: Int, idleTimeout: TimeAmount = .seconds(60)) {
        self.maximumIdle = max(maximumIdle, 1)
        self.idleTimeout = idleTimeout
    }

    enum Lease: Equatable {
        /// Use this idle connection.
        case reuse(Connection)
        /// Connect a new one (and report it with `connected`).
        case connect
        /// The client is shut down: no request.
        case shutDown
    }

    /// A connection for a request to `origin`; `close` are idle connections found too old on the way, to close.
    mutating func lease(_ origin: HTTP1Target.Origin, now: NIODeadline) -> (lease: Lease, close: [Connection]) {
        guard !isShutDown else { return (.shutDown, []) }
        var close: [Connection] = []
        while let last = idle[origin]?.popLast() {
            if now - last.since > idleTimeout {
                close.append(last.connection)
                continue
            }
            inUse.insert(last.connection)
            return (.reuse(last.connection), close)
        }
        return (.connect, close)
    }

    /// A new connection, made after `.connect`: false when the client was shut down meanwhile (close it).
    mutating func connected(_ connection: Connection) -> Bool {
        guard !isShutDown else { return false }
        inUse.insert(connection)
        return true
    }

    /// A request on `connection` is over: true when the connection goes back to the idle ones; false when it is to
    /// be closed (it can't be reused, the client is shut down, or enough are idle already).
    mutating func release(
        _ connection: Connection, to origin: HTTP1Target.Origin, reusable: Bool, now: NIODeadline
    ) -> Bool {
        inUse.remove(connection)
        guard reusable, !isShutDown, idle[origin, default: []].count < maximumIdle else { return false }
        idle[origin, default: []].append(Idle(connection: connection, since: now))
        return true
    }

    /// The connection closed (the server closed it, or it broke): it is no longer offered.
    mutating func closed(_ connection: Connection, origin: HTTP1Target.Origin) {
        inUse.remove(connection)
        idle[origin]?.removeAll { $0.connection == connection }
        if idle[origin]?.isEmpty == true { idle[origin] = nil }
    }

    /// Stops the pool: every connection, idle or in use, to close (requests in flight fail).
    mutating func shutDown() -> [Connection] {
        isShutDown = true
        let all = idle.values.flatMap { $0.map(\.connection) } + inUse
        idle = [:]
        inUse = []
        return all
    }

    /// Idle connections, all origins (for tests and statistics).
    var idleCount: Int { idle.values.reduce(0) { $0 + $1.count } }
    var inUseCount: Int { inUse.count }
}
