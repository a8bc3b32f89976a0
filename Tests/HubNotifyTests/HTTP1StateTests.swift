import NIOCore
import NIOHTTP1
import Testing

@testable import HubNotify

/// The HTTP/1.1 client's value types on their own: reading a URL, one exchange's paths, the pool's bookkeeping.
@Suite struct HTTP1StateTests {
    @Test func targetsReadTheirURL() throws {
        let plain = try HTTP1Target("http://127.0.0.1:8080/hook?x=1#frag")
        #expect(plain.origin == .init(tls: false, host: "127.0.0.1", port: 8080))
        #expect(plain.path == "/hook?x=1" && plain.origin.hostHeader == "127.0.0.1:8080" && plain.origin.hostIsAddress)
        let secure = try HTTP1Target("HTTPS://user:pw@ntfy.example.org")
        #expect(secure.origin == .init(tls: true, host: "ntfy.example.org", port: 443))
        #expect(secure.path == "/" && secure.origin.hostHeader == "ntfy.example.org" && !secure.origin.hostIsAddress)
        let v6 = try HTTP1Target("http://[::1]:9000?q")
        #expect(v6.origin.host == "::1" && v6.origin.hostHeader == "[::1]:9000" && v6.path == "/?q")
        #expect(v6.origin.hostIsAddress)
        for (url, reason) in [
            ("ftp://x/", "does not start with http:// or https://"), ("http:///a", "names no host"),
            ("http://x:0/", "port '0'"), ("http://x:http/", "port 'http'"), ("http://[::1/", "no ]"),
        ] {
            #expect(throws: HTTP1Error.self) { try HTTP1Target(url) }
            do {
                _ = try HTTP1Target(url)
            } catch {
                #expect("\(error)".contains(reason), "\(error)")
            }
        }
    }

    private func head(_ status: Int, _ headers: HTTPHeaders = [:], version: HTTPVersion = .http1_1) -> HTTPResponseHead
    {
        HTTPResponseHead(version: version, status: .init(statusCode: status), headers: headers)
    }

    /// The answer, and whether the connection goes back to the pool, from an action.
    private func answer(_ action: HTTP1Exchange.Action) -> (status: Int, body: String, reuse: Bool)? {
        guard case .succeed(let answer, let reuse) = action else { return nil }
        return (answer.status, answer.body, reuse)
    }

    private func failure(_ action: HTTP1Exchange.Action) -> String? {
        guard case .fail(let error) = action else { return nil }
        return "\(error)"
    }

    @Test func aKeptAliveAnswerLeavesTheConnectionIdle() {
        var exchange = HTTP1Exchange()
        let check1 = exchange.start(limit: 10, closeAfter: false)
        #expect(check1)
        let check2 = !exchange.start(limit: 10, closeAfter: false)  // one request at a time
        #expect(check2)
        _ = exchange.receive(head(100))  // an interim answer is not the answer
        _ = exchange.receive(head(202))
        _ = exchange.receive(ByteBuffer(string: "accepted"))
        let done = answer(exchange.receiveEnd())
        #expect(done?.status == 202 && done?.body == "accepted" && done?.reuse == true)
        let check3 = exchange.isIdle && exchange.start(limit: 10, closeAfter: false)
        #expect(check3)
    }

    @Test func closeHeadersAndHTTP10EndTheConnection() {
        for (headers, version, closeAfter) in [
            (["Connection": "close"] as HTTPHeaders, HTTPVersion.http1_1, false), ([:], .http1_0, false),
            ([:], .http1_1, true),
        ] {
            var exchange = HTTP1Exchange()
            let check4 = exchange.start(limit: 10, closeAfter: closeAfter)
            #expect(check4)
            _ = exchange.receive(head(200, headers, version: version))
            let check5 = answer(exchange.receiveEnd())?.reuse == false
            #expect(check5)
            let check6 = !exchange.start(limit: 10, closeAfter: false)
            #expect(check6)
        }
    }

    /// A body past the limit: the start is kept and handed over at once, and the connection is not reused.
    @Test func aLongBodyIsCutAtTheLimit() {
        var exchange = HTTP1Exchange()
        let check7 = exchange.start(limit: 6, closeAfter: false)
        #expect(check7)
        _ = exchange.receive(head(500))
        let check8 = answer(exchange.receive(ByteBuffer(string: "over"))) == nil
        #expect(check8)
        let cut = answer(exchange.receive(ByteBuffer(string: "loaded and more")))
        #expect(cut?.status == 500 && cut?.body == "overlo" && cut?.reuse == false)
    }

    /// Closing before the answer fails (the server may have acted: no resend here); closing in a 2xx body keeps the
    /// answer; in another status's body it fails.
    @Test func closesFailOrKeepByWhatCame() {
        var beforeHead = HTTP1Exchange()
        let check9 = beforeHead.start(limit: 10, closeAfter: false)
        #expect(check9)
        let check10 = failure(beforeHead.closed(error: nil))?.contains("closed the connection before answering") == true
        #expect(check10)

        var inOK = HTTP1Exchange()
        let check11 = inOK.start(limit: 10, closeAfter: false)
        #expect(check11)
        _ = inOK.receive(head(200))
        _ = inOK.receive(ByteBuffer(string: "par"))
        let check12 = answer(inOK.closed(error: nil))?.body == "par"
        #expect(check12)

        var inError = HTTP1Exchange()
        let check13 = inError.start(limit: 10, closeAfter: false)
        #expect(check13)
        _ = inError.receive(head(503))
        let check14 = failure(inError.closed(error: nil))?.contains("in the middle of an HTTP 503 answer") == true
        #expect(check14)

        var idle = HTTP1Exchange()
        let idleClose = idle.closed(error: nil)
        if case .none = idleClose {} else { Issue.record("an idle close is no failure") }
        let check15 = !idle.start(limit: 1, closeAfter: false)
        #expect(check15)
    }

    @Test func deadlinesAndStrayAnswers() {
        var waiting = HTTP1Exchange()
        let check16 = waiting.start(limit: 10, closeAfter: false)
        #expect(check16)
        let check17 = failure(waiting.timedOut(.milliseconds(300))) == "timed out: no answer within 300ms"
        #expect(check17)
        let check18 = failure(waiting.timedOut(.milliseconds(300))) == nil  // once
        #expect(check18)

        var stray = HTTP1Exchange()
        let check19 = failure(stray.receive(head(200)))?.contains("no request waiting") == true
        #expect(check19)
        let check20 = !stray.start(limit: 10, closeAfter: false)
        #expect(check20)
    }

    @Test func poolReusesTheLastIdleAndBoundsIdle() {
        let a = HTTP1Target.Origin(tls: false, host: "a", port: 80)
        let b = HTTP1Target.Origin(tls: true, host: "b", port: 443)
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var pool = HTTP1PoolState<Int>(maximumIdle: 2, idleTimeout: .seconds(60))
        let check21 = pool.lease(a, now: t0).lease == .connect
        #expect(check21)
        for connection in [1, 2, 3] {
            let added = pool.connected(connection)
            #expect(added)
        }
        let check22 = pool.release(1, to: a, reusable: true, now: t0)
        #expect(check22)
        let check23 = pool.release(2, to: a, reusable: true, now: t0)
        #expect(check23)
        let check24 = !pool.release(3, to: a, reusable: true, now: t0)  // two idle are enough
        #expect(check24)
        let check25 = pool.lease(b, now: t0).lease == .connect  // another origin shares nothing
        #expect(check25)
        let check26 = pool.lease(a, now: t0).lease == .reuse(2)
        #expect(check26)
        let check27 = !pool.release(2, to: a, reusable: false, now: t0)
        #expect(check27)
        pool.closed(1, origin: a)
        let check28 = pool.lease(a, now: t0).lease == .connect && pool.idleCount == 0 && pool.inUseCount == 0
        #expect(check28)
    }

    @Test func poolExpiresOldIdleAndShutsDown() {
        let a = HTTP1Target.Origin(tls: false, host: "a", port: 80)
        let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var pool = HTTP1PoolState<Int>(maximumIdle: 4, idleTimeout: .seconds(60))
        for connection in [1, 2] {
            let added = pool.connected(connection)
            #expect(added)
        }
        let check29 = pool.release(1, to: a, reusable: true, now: t0)
        #expect(check29)
        let check30 = pool.release(2, to: a, reusable: true, now: t0 + .seconds(50))
        #expect(check30)
        let later = pool.lease(a, now: t0 + .seconds(70))
        #expect(later.lease == .reuse(2) && later.close.isEmpty)
        let check31 = pool.release(2, to: a, reusable: true, now: t0 + .seconds(70))
        #expect(check31)
        let (lease, close) = pool.lease(a, now: t0 + .seconds(200))
        #expect(lease == .connect && close.sorted() == [1, 2])

        let check32 = pool.connected(5) && pool.connected(6) && pool.release(6, to: a, reusable: true, now: t0)
        #expect(check32)
        let check33 = pool.shutDown().sorted() == [5, 6]
        #expect(check33)
        let check34 = pool.lease(a, now: t0).lease == .shutDown && !pool.connected(7)
        #expect(check34)
        let check35 = !pool.release(5, to: a, reusable: true, now: t0)
        #expect(check35)
    }
}
