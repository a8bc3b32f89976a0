import NIOCore
import NIOHTTP1

/// One request's life on a kept-alive HTTP/1.1 connection, as its channel handler sees it: the answer's head, its
/// body kept up to a limit, its end, the connection closing, the deadline. A value type with no I/O, so that every
/// path (an answer, a close before it, a close in the middle of the body, a timeout) has a unit test; the handler
/// does what the returned `Action` says.
struct HTTP1Exchange {
    private enum State {
        /// No request in flight: the connection may take one.
        case idle
        /// The request went out (or is going out); nothing of the answer yet.
        case awaitingHead(limit: Int, closeAfter: Bool)
        /// The answer's head came; its body, kept up to `limit` bytes.
        case body(head: HTTPResponseHead, kept: [UInt8], limit: Int, closeAfter: Bool)
        /// The connection is closed, or is being closed: it takes no request.
        case closed
    }

    /// What the handler does next.
    enum Action {
        case none
        /// The answer is complete: hand it over; `reuse` false closes the connection (`Connection: close`, HTTP/1.0,
        /// a body cut at the limit), else it goes back to the pool.
        case succeed(HTTPDelivery.Answer, reuse: Bool)
        /// No whole answer (or an answer nobody asked for): close the connection and fail the request in flight.
        case fail(any Error)
    }

    private var state = State.idle

    /// Whether a request may start now: false once the connection has closed (nothing is written then).
    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// A request is written.
    /// - Parameters:
    ///   - limit: the bytes of the answer's body kept; once more arrive, the answer is handed over with what is
    ///     kept and the connection closed, rather than read to its end.
    ///   - closeAfter: the request says `Connection: close`.
    /// - Returns: false when the connection can't take it (closed, or busy): the request must not be written.
    mutating func start(limit: Int, closeAfter: Bool) -> Bool {
        guard case .idle = state else { return false }
        state = .awaitingHead(limit: max(limit, 0), closeAfter: closeAfter)
        return true
    }

    mutating func receive(_ head: HTTPResponseHead) -> Action {
        guard case .awaitingHead(let limit, let closeAfter) = state else {
            return unexpected("an answer's head with no request waiting for one")
        }
        // 100 Continue and other interim answers: the real one follows.
        if (100..<200).contains(head.status.code) && head.status.code != 101 { return .none }
        state = .body(head: head, kept: [], limit: limit, closeAfter: closeAfter)
        return .none
    }

    mutating func receive(_ chunk: ByteBuffer) -> Action {
        guard case .body(let head, var kept, let limit, let closeAfter) = state else {
            return unexpected("body bytes with no answer's head before them")
        }
        // The state's own copy is dropped first, so that appending does not copy the array.
        state = .closed
        let room = limit - kept.count
        kept += chunk.readableBytesView.prefix(room)
        if chunk.readableBytes > room {
            // A long page: what callers use is kept; reading the rest only to reuse the connection is not worth it.
            state = .closed
            return .succeed(Self.answer(head, kept), reuse: false)
        }
        state = .body(head: head, kept: kept, limit: limit, closeAfter: closeAfter)
        return .none
    }

    mutating func receiveEnd() -> Action {
        guard case .body(let head, let kept, _, let closeAfter) = state else {
            return unexpected("the end of an answer that did not start")
        }
        let reuse = head.isKeepAlive && !closeAfter && head.status.code != 101
        state = reuse ? .idle : .closed
        return .succeed(Self.answer(head, kept), reuse: reuse)
    }

    /// The connection closed; `error` is what closed it, when something did (a reset, TLS, a garbled answer).
    mutating func closed(error: (any Error)?) -> Action {
        let previous = state
        state = .closed
        switch previous {
        case .idle, .closed:
            return .none
        case .awaitingHead:
            return .fail(error ?? HTTP1Error.closedBeforeAnswer())
        case .body(let head, let kept, _, _):
            // A 2xx head says the receiver took the request: a body cut short does not undo that (as before, with
            // async-http-client). Any other status is an answer only once whole.
            if (200..<300).contains(head.status.code) { return .succeed(Self.answer(head, kept), reuse: false) }
            return .fail(error ?? HTTP1Error.closedBeforeAnswer("in the middle of an HTTP \(head.status.code) answer"))
        }
    }

    /// The attempt's deadline passed with no whole answer.
    mutating func timedOut(_ timeout: Duration) -> Action {
        switch state {
        case .idle, .closed:
            return .none
        case .awaitingHead, .body:
            state = .closed
            return .fail(HTTPDelivery.TimedOut(timeout: timeout))
        }
    }

    /// The server sent what no request asked for: the connection can't be trusted to line answers up with requests,
    /// so it is closed (failing the request in flight, if any).
    private mutating func unexpected(_ what: String) -> Action {
        state = .closed
        return .fail(HTTP1Error.garbled(what))
    }

    private static func answer(_ head: HTTPResponseHead, _ kept: [UInt8]) -> HTTPDelivery.Answer {
        HTTPDelivery.Answer(
            status: Int(head.status.code), headers: head.headers, body: String(decoding: kept, as: UTF8.self))
    }
}
