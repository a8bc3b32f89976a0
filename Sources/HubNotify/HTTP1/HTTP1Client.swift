import Foundation
import HubSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A lean HTTP/1.1 client for one backend: kept-alive connections per origin (up to the backend's concurrency idle),
/// one request at a time on each, the answer read on the event loop and handed over once. What async-http-client's
/// general machinery cost per request (its request state machines, task hops, header handling) was most of hubd's
/// CPU per webhook notification; this does only what a backend needs.
///
/// No redirects are followed (a 3xx is an answer), a refused connection fails the attempt at once, and each attempt
/// ends at the backend's `timeout` (`HTTPDelivery.TimedOut`).
final class HTTP1Client: Sendable {
    private let pool: Locked<HTTP1PoolState<HTTP1Connection>>
    private let tlsConfiguration: TLSConfiguration
    /// Made on the first https connection: loading the system's trust roots is work a plain-http backend never needs.
    private let tls = Locked<NIOSSLContext?>(nil)
    private let timeout: Duration
    private let userAgent: String

    /// - Parameters:
    ///   - tls: how https origins are checked (the system's trust roots, or a `ca_file`'s).
    ///   - maximumIdle: idle connections kept per origin (the backend's concurrency).
    init(tls: TLSConfiguration, timeout: Duration, maximumIdle: Int, userAgent: String) {
        tlsConfiguration = tls
        self.timeout = timeout
        self.userAgent = userAgent
        pool = Locked(HTTP1PoolState(maximumIdle: maximumIdle))
    }

    /// One request, one answer; `body` `nil` sends none.
    func execute(
        _ method: HTTPMethod, _ url: String, headers: HTTPHeaders, body: [UInt8]?, keeping limit: Int
    ) async throws -> HTTPDelivery.Answer {
        let target = try HTTP1Target(url)
        let deadline = NIODeadline.now() + TimeAmount(min(timeout, .seconds(86_400)))
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target.path)
        head.headers.add(name: "Host", value: target.origin.hostHeader)
        head.headers.add(contentsOf: headers)
        head.headers.replaceOrAdd(name: "User-Agent", value: userAgent)
        if let body {
            head.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        } else if method == .POST || method == .PUT {
            head.headers.replaceOrAdd(name: "Content-Length", value: "0")
        }
        let request = HTTP1Connection.Request(
            head: head, body: body.map { ByteBuffer(bytes: $0) }, limit: limit, deadline: deadline, timeout: timeout)

        var (connection, reused) = try await self.connection(for: target.origin, deadline: deadline)
        while true {
            do {
                let outcome = try await Self.run(request, on: connection)
                release(connection, reusable: outcome.reusable)
                return outcome.answer
            } catch let error as HTTP1Error where error == .notSent && reused {
                // The kept-alive connection had closed before a byte of this request was written (the server's idle
                // timeout): sending it on a new connection can't deliver it twice. A request that was written and
                // then met a close is never sent again here (`closedBeforeAnswer`): the server may have acted on it.
                release(connection, reusable: false)
                (connection, reused) = try await self.connection(for: target.origin, deadline: deadline)
            } catch {
                release(connection, reusable: false)
                throw error
            }
        }
    }

    /// Runs `request`; cancelling the task closes the connection, failing the request.
    private static func run(
        _ request: HTTP1Connection.Request, on connection: HTTP1Connection
    ) async throws -> HTTP1Connection.Outcome {
        try await withTaskCancellationHandler {
            try await connection.execute(request).get()
        } onCancel: {
            connection.close()
        }
    }

    /// An idle connection to `origin`, else a new one; `reused` says which.
    private func connection(
        for origin: HTTP1Target.Origin, deadline: NIODeadline
    ) async throws -> (HTTP1Connection, reused: Bool) {
        let (lease, expired) = pool.withLock { $0.lease(origin, now: .now()) }
        for connection in expired { connection.close() }
        switch lease {
        case .reuse(let connection):
            return (connection, true)
        case .shutDown:
            throw HTTP1Error.shutDown
        case .connect:
            break
        }
        let tls = origin.tls ? try tlsContext(for: origin) : nil
        let remaining = deadline - .now()
        let connection: HTTP1Connection
        do {
            connection = try await HTTP1Connection.connect(
                to: origin, tls: tls, timeout: max(.milliseconds(1), min(.seconds(10), remaining)))
        } catch ChannelError.connectTimeout(_) {
            if remaining <= .seconds(10) { throw HTTPDelivery.TimedOut(timeout: timeout) }
            throw HTTP1Error.connectFailed(origin, "no answer within 10 s")
        } catch let error as NIOConnectionError {
            throw HTTP1Error.connectFailed(origin, Self.reason(error))
        }
        guard pool.withLock({ $0.connected(connection) }) else {
            connection.close()
            throw HTTP1Error.shutDown
        }
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.pool.withLock { $0.closed(connection, origin: origin) }
        }
        return (connection, false)
    }

    private func tlsContext(for origin: HTTP1Target.Origin) throws -> NIOSSLContext {
        try tls.withLock { context in
            if let context { return context }
            do {
                let made = try NIOSSLContext(configuration: tlsConfiguration)
                context = made
                return made
            } catch {
                throw HTTP1Error.connectFailed(origin, "cannot set up TLS: \(error)")
            }
        }
    }

    /// A connection closed since its answer (the server's `Connection: close` raced it) goes nowhere.
    private func release(_ connection: HTTP1Connection, reusable: Bool) {
        let reusable = reusable && connection.isActive
        let kept = pool.withLock { $0.release(connection, to: connection.origin, reusable: reusable, now: .now()) }
        if !kept { connection.close() }
    }

    /// Why connecting failed, in the system's words ("Connection refused"), without NIO's type names.
    private static func reason(_ error: NIOConnectionError) -> String {
        if let dns = error.dnsAError ?? error.dnsAAAAError, error.connectionErrors.isEmpty {
            return "cannot resolve the host name (\(dns))"
        }
        guard let first = error.connectionErrors.first else { return "\(error)" }
        if let io = first.error as? IOError { return String(cString: strerror(io.errnoCode)) }
        return "\(first.error)"
    }

    /// Closes every connection; requests in flight fail, and later ones fail with `HTTP1Error.shutDown`.
    func shutdown() {
        for connection in pool.withLock({ $0.shutDown() }) { connection.close() }
    }
}
