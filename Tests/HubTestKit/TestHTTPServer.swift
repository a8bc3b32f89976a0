import Foundation
import HubSupport
import Mosquitto
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A real HTTP server on a free loopback port, for webhook, ntfy and APNs tests: HTTP/1.1, or HTTP/2 over TLS
/// (what APNs speaks). It records every request and answers with what the test's responder says.
public final class TestHTTPServer: Sendable {
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [(String, String)]
        public var body: [UInt8]
        /// 1 or 2.
        public var httpVersion: Int
        public var received: ContinuousClock.Instant
        /// Which connection it came on (1 for the server's first): tests of kept-alive connections count them.
        public var connection: Int

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: String
        /// Close the connection without answering (a server that crashed or reset it after reading the request).
        public var hangUp = false

        public init(status: Int = 200, headers: [(String, String)] = [], body: String = "") {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public static let ok = Response()
        public static let hangUp = {
            var response = Response(); response.hangUp = true; return response
        }()
    }

    /// Decides the answer to a request; `index` counts the earlier requests to the same path (0 for the first).
    public typealias Responder = @Sendable (_ request: Request, _ index: Int) -> Response

    public let port: Int
    private let channel: any Channel
    private let recorded = Locked<[Request]>([])
    private let waiters = Locked<[(count: Int, continuation: CheckedContinuation<Void, Never>)]>([])

    public var url: String { "\(scheme)://127.0.0.1:\(port)" }
    private let scheme: String
    /// The connections accepted (open or since closed).
    private let open: Locked<[any Channel]>

    /// Starts a server (on `port`, else a free one); with `tls`, it speaks HTTPS, and HTTP/2 when `http2` (ALPN `h2`).
    public static func start(
        tls: TestCertificates.ServerIdentity? = nil, http2: Bool = false, port: Int = 0,
        adopting reserved: ReservedPort? = nil, responder: @escaping Responder = { _, _ in .ok }
    ) async throws -> TestHTTPServer {
        let sslContext: NIOSSLContext?
        if let tls {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificateFile).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.keyFile, format: .pem)))
            configuration.applicationProtocols = http2 ? ["h2"] : ["http/1.1"]
            sslContext = try NIOSSLContext(configuration: configuration)
        } else {
            sslContext = nil
        }
        let box = Locked<TestHTTPServer?>(nil)
        let connections = Locked(0)
        let open = Locked<[any Channel]>([])
        let record: @Sendable (Request) -> Response = { request in
            guard let server = box.withLock({ $0 }) else { return Response(status: 503) }
            return server.record(request, responder)
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                open.withLock { $0.append(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                }.flatMap {
                    if http2 {
                        return channel.configureHTTP2Pipeline(mode: .server) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers([
                                    HTTP2FramePayloadToHTTP1ServerCodec(),
                                    RecordingHandler(
                                        version: 2,
                                        connection: connections.withLock {
                                            $0 += 1; return $0
                                        },
                                        record: record),
                                ])
                            }
                        }.map { _ in }
                    }
                    return channel.pipeline.configureHTTPServerPipeline().flatMap {
                        channel.eventLoop.makeCompletedFuture {
                            let connection = connections.withLock {
                                $0 += 1; return $0
                            }
                            try channel.pipeline.syncOperations.addHandler(
                                RecordingHandler(version: 1, connection: connection, record: record))
                        }
                    }
                }
            }
        // A reserved port's socket itself, already bound: no moment in which another test could take the port.
        let channel =
            try await
            (reserved.map { bootstrap.withBoundSocket($0.adopt()) }
            ?? bootstrap.bind(host: "127.0.0.1", port: port)).get()
        let server = TestHTTPServer(channel: channel, scheme: tls == nil ? "http" : "https", open: open)
        box.withLock { $0 = server }
        return server
    }

    private init(channel: any Channel, scheme: String, open: Locked<[any Channel]>) {
        self.channel = channel
        self.open = open
        self.port = channel.localAddress?.port ?? 0
        self.scheme = scheme
    }

    /// The requests so far.
    public var requests: [Request] { recorded.withLock { $0 } }

    /// Waits until `count` requests have arrived; throws after `timeout`.
    @discardableResult
    public func waitForRequests(_ count: Int, within timeout: Duration = .seconds(20)) async throws -> [Request] {
        let deadline = ContinuousClock.now + timeout
        while recorded.withLock({ $0.count }) < count {
            guard ContinuousClock.now < deadline else {
                throw TestKitError("expected \(count) requests within \(timeout), got \(requests.count)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return requests
    }

    /// Closes every connection accepted so far, as a server's idle timeout does; the listener stays.
    public func closeConnections() async {
        for channel in open.withLock({ $0 }) { try? await channel.close() }
    }

    public func stop() async {
        try? await channel.close()
    }

    private func record(_ request: Request, _ responder: Responder) -> Response {
        let index = recorded.withLock { recorded in
            defer { recorded.append(request) }
            return recorded.count { $0.path == request.path }
        }
        return responder(request, index)
    }
}

/// Collects one request and answers it.
private final class RecordingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let version: Int
    let connection: Int
    let record: @Sendable (TestHTTPServer.Request) -> TestHTTPServer.Response
    var head: HTTPRequestHead?
    var body: [UInt8] = []

    init(
        version: Int, connection: Int, record: @escaping @Sendable (TestHTTPServer.Request) -> TestHTTPServer.Response
    ) {
        self.version = version
        self.connection = connection
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            let request = TestHTTPServer.Request(
                method: head.method.rawValue, path: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                body: body, httpVersion: version, received: .now, connection: connection)
            let response = record(request)
            if response.hangUp {
                context.close(promise: nil)
                return
            }
            var headers = HTTPHeaders(response.headers)
            headers.replaceOrAdd(name: "content-length", value: String(response.body.utf8.count))
            let responseHead = HTTPResponseHead(
                version: head.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: response.body)))), promise: nil)
            // `Connection: close` in the answer: close once it is written, as a server that means it does.
            let closing = headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                if closing { context.close(promise: nil) }
            }
        }
    }
}
