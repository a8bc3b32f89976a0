import AsyncHTTPClient
import Foundation
import HubCore
import HubSupport
import NIOCore
import NIOHTTP1
import NIOSSL

/// An HTTP client for one backend, and the reading of HTTP answers as delivery results. The hub's one HTTP client:
/// hubd's sources that fetch a page (the UV source's TEMIS page) use it too.
///
/// HTTP/1.1 (every backend but APNs) goes through `HTTP1Client`, kept-alive connections with little work per request;
/// HTTP/2 (`http2: true`, APNs) through async-http-client, which speaks it.
package struct HTTPDelivery: Sendable {
    private enum Transport: Sendable {
        case http1(HTTP1Client)
        case http2(HTTPClient)
    }

    private let transport: Transport
    /// How long an attempt may take, connecting included.
    let timeout: Duration

    /// Closes the client from synchronous code (a configuration that failed half-way through).
    package func shutdownNow() {
        switch transport {
        case .http1(let client): client.shutdown()
        case .http2(let client): try? client.syncShutdown()
        }
    }

    /// A client that trusts the system's CAs, or only `caFile` when given (a private server, or a test).
    /// - Parameter concurrency: the backend's attempts at once: as many connections are kept alive.
    package init(caFile: String?, http2: Bool = false, timeout: Duration, concurrency: Int = 1) throws {
        self.timeout = timeout
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile)) }
        guard http2 else {
            tls.applicationProtocols = ["http/1.1"]
            transport = .http1(
                HTTP1Client(
                    tls: tls, timeout: timeout, maximumIdle: concurrency,
                    userAgent: "SensorHub/\(SensorHubVersion.current)"))
            return
        }
        let deadline = TimeAmount.nanoseconds(Int64(min(timeout.seconds, 86_400) * 1e9))
        var configuration = HTTPClient.Configuration()
        tls.applicationProtocols = ["h2"]
        configuration.tlsConfiguration = tls
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        // A refused connection is an answer: fail the attempt now and let the queue's back-off decide, rather than
        // have the client retry it until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: min(.seconds(10), deadline), read: deadline)
        transport = .http2(HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration))
    }

    package struct Answer: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: String
    }

    /// An attempt that got no answer within the backend's `timeout`.
    struct TimedOut: Error, CustomStringConvertible {
        var timeout: Duration
        var description: String { "timed out: no answer within \(DurationText.format(timeout))" }
    }

    /// POSTs `body`; a failure to get any answer (refused, reset, TLS, timeout) is an error to retry.
    ///
    /// The client keeps the backend's `timeout` itself (a timer on its event loop), so the queue needs no watchdog
    /// task per attempt: that was a quarter of hubd's CPU per webhook request.
    func post(_ url: String, headers: HTTPHeaders, body: [UInt8]) async throws -> Answer {
        try await request(.POST, url, headers: headers, body: body)
    }

    /// GETs a page: its body up to `limit` bytes (the rest is not read).
    package func get(_ url: String, limit: Int) async throws -> Answer {
        try await request(.GET, url, headers: HTTPHeaders(), body: nil, keeping: limit)
    }

    /// One request (`post`'s, with any method; `body` `nil` sends none).
    /// - Parameter keeping: the bytes of the body kept: the start is enough for an error message, and a big 200
    ///   page must not fail a delivery.
    func request(
        _ method: HTTPMethod, _ url: String, headers: HTTPHeaders, body: [UInt8]?, keeping limit: Int = 4096
    ) async throws -> Answer {
        switch transport {
        case .http1(let client):
            return try await client.execute(method, url, headers: headers, body: body, keeping: limit)
        case .http2(let client):
            return try await Self.request(
                on: client, timeout: timeout, method, url, headers: headers, body: body, keeping: limit)
        }
    }

    /// One request through async-http-client (HTTP/2).
    private static func request(
        on client: HTTPClient, timeout: Duration, _ method: HTTPMethod, _ url: String, headers: HTTPHeaders,
        body: [UInt8]?, keeping limit: Int
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers = headers
        request.headers.replaceOrAdd(name: "User-Agent", value: "SensorHub/\(SensorHubVersion.current)")
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let deadline = TimeAmount.nanoseconds(Int64(min(timeout.seconds, 86_400) * 1e9))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: deadline)
        } catch {
            throw named(error, timeout: timeout)
        }
        var kept: [UInt8] = []
        do {
            for try await var chunk in response.body where kept.count < limit {
                kept += chunk.readBytes(length: min(chunk.readableBytes, limit - kept.count)) ?? []
            }
        } catch {
            if !(200..<300).contains(Int(response.status.code)) { throw named(error, timeout: timeout) }
        }
        return Answer(
            status: Int(response.status.code), headers: response.headers, body: String(decoding: kept, as: UTF8.self))
    }

    /// The client's own timeouts, said as the backend's `timeout`; any other error as it is.
    private static func named(_ error: any Error, timeout: Duration) -> any Error {
        guard let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout else {
            return error
        }
        return TimedOut(timeout: timeout)
    }

    /// 2xx delivered; 408, 429 and 5xx retried, honouring `Retry-After`; any other status fails for good.
    static func result(_ answer: Answer, what: String) -> DeliveryResult {
        // The reason is written only for an answer that needs one: a delivery (the common case) costs no text.
        var reason: String {
            let detail =
                answer.body.isEmpty
                ? "" : ": " + Template.clip(answer.body.trimmingCharacters(in: .whitespacesAndNewlines), 200)
            return "\(what) answered HTTP \(answer.status)\(detail)"
        }
        switch answer.status {
        case 200..<300:
            return .delivered
        case 408, 425, 429, 500..<600:
            return .retry(reason: reason, after: retryAfter(answer.headers.first(name: "Retry-After")))
        default:
            return .failed(reason: reason)
        }
    }

    /// POSTs (or PUTs) one JSON object, its members written by `members` (the chat backends' request): the answer,
    /// or why there was none.
    func postJSON(
        _ url: String, method: HTTPMethod = .POST, headers: HTTPHeaders = HTTPHeaders(),
        members: (inout JSONWriter, inout Bool) -> Void
    ) async -> Result<Answer, any Error> {
        var writer = JSONWriter(capacity: 256, compact: true)
        var first = true
        writer.raw("{")
        members(&writer, &first)
        writer.raw("}")
        var headers = headers
        headers.add(name: "Content-Type", value: "application/json")
        do {
            return .success(try await request(method, url, headers: headers, body: writer.bytes))
        } catch {
            return .failure(error)
        }
    }

    /// POSTs an HTML form (`application/x-www-form-urlencoded`, every byte but the unreserved ones escaped).
    func postForm(_ url: String, fields: [(String, String)]) async -> Result<Answer, any Error> {
        let body = fields.map { WebText.percentEncoded($0) + "=" + WebText.percentEncoded($1) }.joined(separator: "&")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        do {
            return .success(try await post(url, headers: headers, body: Array(body.utf8)))
        } catch {
            return .failure(error)
        }
    }

    /// An error without an answer: the receiver may be back later.
    static func result(_ error: any Error, what: String) -> DeliveryResult {
        .retry(reason: "\(what): \(error)")
    }

    /// `Retry-After`: seconds, or an HTTP date.
    package static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now).rounded(.up)))
    }

    package func shutdown() async {
        switch transport {
        case .http1(let client): client.shutdown()
        case .http2(let client): try? await client.shutdown()
        }
    }
}

/// A backend that owns an HTTP client: the client ends each attempt at the backend's timeout (its deadline and read
/// timeout), so the queue runs no watchdog of its own.
protocol HTTPBacked: Notifier {
    var http: HTTPDelivery { get }
}

extension HTTPBacked {
    var enforcesTimeout: Bool { true }
    func shutdown() async { await http.shutdown() }
}
