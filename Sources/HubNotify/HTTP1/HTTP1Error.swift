/// Why an HTTP/1.1 attempt got no answer. A struct over a private code, as async-http-client's errors are, so that a
/// new case breaks no caller; the description says what happened and where to look.
struct HTTP1Error: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable {
        case invalidURL
        case connectFailed
        case closedBeforeAnswer
        case notSent
        case shutDown
        case garbled
    }

    private let code: Code
    private let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The URL can't be requested (not http or https, no host, a bad port): a configuration to fix.
    static func invalidURL(_ url: String, _ reason: String) -> HTTP1Error {
        HTTP1Error(.invalidURL, "'\(url)' is not a URL to send to: \(reason)")
    }

    /// No connection: refused, no such host, or no answer to the connection attempt (within `timeout`).
    static func connectFailed(_ origin: HTTP1Target.Origin, _ reason: String) -> HTTP1Error {
        HTTP1Error(.connectFailed, "cannot connect to \(origin): \(reason)")
    }

    /// The server closed the connection (or reset it) after the request went out and before a whole answer came:
    /// it may have acted on the request, so the request is not sent again on another connection here; the queue
    /// decides, with its back-off.
    static func closedBeforeAnswer(_ reason: String? = nil) -> HTTP1Error {
        HTTP1Error(
            .closedBeforeAnswer,
            "the server closed the connection before answering" + (reason.map { " (\($0))" } ?? ""))
    }

    /// A kept-alive connection was already closed when the request was to be written: not a byte went out, so the
    /// request may go again on a new connection.
    static let notSent = HTTP1Error(.notSent, "the kept-alive connection was closed before the request was written")

    /// The client was shut down (the backend was removed or the hub is stopping).
    static let shutDown = HTTP1Error(.shutDown, "the HTTP client was shut down (the backend stopped)")

    /// The answer was not HTTP/1.1 the decoder could read.
    static func garbled(_ reason: String) -> HTTP1Error {
        HTTP1Error(.garbled, "the server's answer is not valid HTTP/1.1: \(reason)")
    }

    var description: String { detail }
}
