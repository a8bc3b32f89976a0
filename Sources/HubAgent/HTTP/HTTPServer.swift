import Foundation
import HubSupport
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The HTTP server: Hummingbird's `Application.run()` without its date cache.
///
/// That cache is a service of its own, a one-second timer behind `cancelOnGracefulShutdown`, and each of its ticks
/// woke hubd's threads about eight times: an idle hub with the HTTP server on woke 10.1 times a second and spent
/// 0.083 % of a core, with it off 1.4 times and 0.050 % (60 s each, 1,000 sensors; issue 38's idle goal is
/// 0.05 %). Here a response's `Date` is formatted when the clock has moved on to another second since the last one
/// (`HTTPDate`), so nothing runs between requests. The rest is what `Application.run()` does for each request.
struct HTTPServer<Responder: HTTPResponder>: Service
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let address: BindAddress
    let serverName: String
    let logger: Logger
    /// hubd's own HTTPS, when `http.tls_certificate` is set.
    var tls: TLSFiles? = nil
    let onServerRunning: @Sendable (any Channel) async -> Void

    func run() async throws {
        let builder =
            tls.map { files in
                HTTPServerBuilder { responder in
                    ReloadingTLSChannel(base: HTTP1Channel(responder: responder), files: files)
                }
            } ?? HTTPServerBuilder.http1()
        let server = try builder.buildServer(
            configuration: ServerConfiguration(address: address, serverName: serverName),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger
        ) { (request, responseWriter: consuming ResponseWriter, channel) in
            var logger = self.logger
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            let context = Responder.Context(source: .init(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                // The channel answers 400 and closes.
                throw error
            } catch {
                logger.debug("unrecognised error", metadata: ["error.type": "\(error)"])
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = HTTPDate.now()
            response.headers[.server] = serverName
            do {
                try await responseWriter.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Not the parser's error: the channel would write a second response after this one. Closed instead.
                throw ParseErrorWhileWriting()
            }
        } onServerRunning: {
            await onServerRunning($0)
        }
        try await server.run()
    }

    /// A request that turned out malformed while its response was being written (its body is read as it streams).
    struct ParseErrorWhileWriting: Error {}
}

/// `Date` headers (RFC 9110's IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"), formatted at most once a second.
enum HTTPDate {
    private static let last = Locked<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let second = time.tv_sec
        if let cached = last.withLock({ $0.second == second ? $0.text : nil }) { return cached }
        let text = format(second)
        last.withLock { $0 = (second, text) }
        return text
    }

    static func format(_ second: Int) -> String {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
