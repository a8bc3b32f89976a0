import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

// bench-sink: an HTTP server that answers 200 to everything and counts requests, for the fan-out benchmark's
// webhook backends (hubd's and mqttwarn's). Prints "ready <port>", then "done <unix seconds>" once it has
// received <count> notifications: one per request, or as many as a batch's X-SensorHub-Batch says.
// usage: bench-sink <count>

let expected = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 1000
let counter = ManagedAtomicCounter()

final class ManagedAtomicCounter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()
    /// Adds `count`; true once, when the total reaches `expected`.
    func add(_ count: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let before = value
        value += count
        return before < expected && value >= expected
    }
}

final class Handler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    /// Notifications in the request being read: hubd's batches say how many (X-SensorHub-Batch), else one.
    private var notifications = 1

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            notifications = head.headers.first(name: "X-SensorHub-Batch").flatMap { Int($0) } ?? 1
        case .body:
            break
        case .end:
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            if counter.add(notifications) {
                FileHandle.standardOutput.write(Data("done \(Date().timeIntervalSince1970)\n".utf8))
            }
        }
    }
}

let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.pipeline.configureHTTPServerPipeline().flatMap { channel.pipeline.addHandler(Handler()) }
    }
    .bind(host: "127.0.0.1", port: 0).wait()
FileHandle.standardOutput.write(Data("ready \(channel.localAddress!.port!)\n".utf8))
try channel.closeFuture.wait()
