import HubSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 connection of a backend's pool, kept alive between requests: one request at a time, the answer read
/// by `HTTP1Handler` on the channel's event loop.
final class HTTP1Connection: Sendable, Hashable {
    /// A request as the handler writes it.
    struct Request: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer?
        /// The answer's body bytes kept.
        var limit: Int
        var deadline: NIODeadline
        /// The backend's `timeout`, named when the deadline passes.
        var timeout: Duration
    }

    /// An answer, and whether the connection may take another request.
    struct Outcome: Sendable {
        var answer: HTTPDelivery.Answer
        var reusable: Bool
    }

    let origin: HTTP1Target.Origin
    private let channel: any Channel
    private let handler: NIOLoopBound<HTTP1Handler>

    private init(origin: HTTP1Target.Origin, channel: any Channel, handler: NIOLoopBound<HTTP1Handler>) {
        self.origin = origin
        self.channel = channel
        self.handler = handler
    }

    /// Connects to `origin` (TLS with `tls` for https), within `timeout`. A refused connection fails at once: the
    /// backend's queue owns retries, a backend makes one attempt.
    static func connect(
        to origin: HTTP1Target.Origin, tls: NIOSSLContext?, timeout: TimeAmount
    ) async throws -> HTTP1Connection {
        let box = Locked<NIOLoopBound<HTTP1Handler>?>(nil)
        let serverName = origin.hostIsAddress ? nil : origin.host
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    try pipeline.addHTTPClientHandlers()
                    let handler = HTTP1Handler()
                    try pipeline.addHandler(handler)
                    box.withLock { $0 = NIOLoopBound(handler, eventLoop: channel.eventLoop) }
                }
            }
            .connect(host: origin.host, port: origin.port).get()
        guard let handler = box.withLock({ $0 }) else {
            channel.close(promise: nil)
            throw HTTP1Error.closedBeforeAnswer("the connection was set up without its handler")
        }
        return HTTP1Connection(origin: origin, channel: channel, handler: handler)
    }

    /// Writes `request` and reads its answer. Fails with `HTTP1Error.notSent` when the connection had closed before
    /// anything was written.
    func execute(_ request: Request) -> EventLoopFuture<Outcome> {
        let promise = channel.eventLoop.makePromise(of: Outcome.self)
        let handler = handler
        if channel.eventLoop.inEventLoop {
            handler.value.start(request, promise: promise)
        } else {
            channel.eventLoop.execute { handler.value.start(request, promise: promise) }
        }
        return promise.futureResult
    }

    /// False once the connection has closed (any thread may ask).
    var isActive: Bool { channel.isActive }

    /// Completes once the connection is closed.
    var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    /// Closes the connection; a request in flight fails.
    func close() {
        channel.close(promise: nil)
    }

    static func == (lhs: HTTP1Connection, rhs: HTTP1Connection) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Writes one request at a time and hands its answer to the waiting promise, as `HTTP1Exchange` decides; the deadline
/// is a timer on the event loop, so no task waits beside each attempt.
final class HTTP1Handler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private var exchange = HTTP1Exchange()
    private var promise: EventLoopPromise<HTTP1Connection.Outcome>?
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    /// What broke the connection (reset, TLS, a garbled answer): the reason a request in flight fails.
    private var error: (any Error)?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func start(_ request: HTTP1Connection.Request, promise: EventLoopPromise<HTTP1Connection.Outcome>) {
        let closeAfter = request.head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
        guard let context, context.channel.isActive, exchange.start(limit: request.limit, closeAfter: closeAfter)
        else {
            promise.fail(HTTP1Error.notSent)
            return
        }
        self.promise = promise
        let timeout = request.timeout
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: request.deadline) {
            self.apply(self.exchange.timedOut(timeout))
        }
        context.write(wrapOutboundOut(.head(request.head)), promise: nil)
        if let body = request.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        // A failed write closes the channel: `channelInactive` fails the request then.
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): apply(exchange.receive(head))
        case .body(let chunk): apply(exchange.receive(chunk))
        case .end: apply(exchange.receiveEnd())
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if self.error == nil {
            self.error = error is HTTPParserError ? HTTP1Error.garbled("\(error)") : error
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        apply(exchange.closed(error: error))
        context.fireChannelInactive()
    }

    private func apply(_ action: HTTP1Exchange.Action) {
        switch action {
        case .none:
            return
        case .succeed(let answer, let reuse):
            let promise = finish()
            if !reuse { context?.close(promise: nil) }
            promise?.succeed(.init(answer: answer, reusable: reuse))
        case .fail(let error):
            let promise = finish()
            context?.close(promise: nil)
            promise?.fail(error)
        }
    }

    private func finish() -> EventLoopPromise<HTTP1Connection.Outcome>? {
        timer?.cancel()
        timer = nil
        defer { promise = nil }
        return promise
    }
}
