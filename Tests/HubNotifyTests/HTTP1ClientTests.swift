import Foundation
import HubSupport
import HubTestKit
import NIOHTTP1
import Testing

@testable import HubNotify

/// `HTTPDelivery`'s HTTP/1.1 client against a real local server: kept-alive connections, the server closing them, a
/// server that hangs up or never answers, and TLS with a `ca_file`.
@Suite struct HTTP1ClientTests {
    private func post(_ http: HTTPDelivery, _ url: String, _ text: String = "{}") async throws -> HTTPDelivery.Answer {
        try await http.post(url, headers: ["Content-Type": "application/json"], body: Array(text.utf8))
    }

    /// 40 requests, 4 at a time, over at most 4 connections: each is kept alive and used again.
    @Test func keptAliveConnectionsAreReused() async throws {
        let server = try await TestHTTPServer.start { request, _ in .init(body: "got \(request.text)") }
        defer { Task { await server.stop() } }
        let http = try HTTPDelivery(caFile: nil, timeout: .seconds(10), concurrency: 4)
        defer { http.shutdownNow() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<10 {
                        let answer = try await post(http, "\(server.url)/hook?w=\(worker)", "\(worker)-\(index)")
                        #expect(answer.status == 200 && answer.body == "got \(worker)-\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let requests = server.requests
        #expect(requests.count == 40)
        #expect(Set(requests.map(\.connection)).count <= 4, "\(Set(requests.map(\.connection)))")
        let first = try #require(requests.first)
        #expect(first.method == "POST" && first.header("Host") == "127.0.0.1:\(server.port)")
        #expect(first.header("Content-Length") == "3" && first.header("User-Agent")?.hasPrefix("SensorHub/") == true)
    }

    /// A server that says `Connection: close` closes after each answer: every request gets a new connection, and
    /// none fails.
    @Test func connectionCloseIsHonoured() async throws {
        let server = try await TestHTTPServer.start { _, _ in .init(headers: [("Connection", "close")]) }
        defer { Task { await server.stop() } }
        let http = try HTTPDelivery(caFile: nil, timeout: .seconds(10))
        defer { http.shutdownNow() }
        for _ in 0..<5 { #expect(try await post(http, server.url + "/").status == 200) }
        #expect(Set(server.requests.map(\.connection)).count == 5)
    }

    /// A server that reads the request and hangs up: the attempt fails, and the request is not sent again on
    /// another connection (the server may have acted on it; the queue decides when to try again).
    @Test func aHangUpAfterTheRequestFailsWithoutResending() async throws {
        let server = try await TestHTTPServer.start { _, index in index == 1 ? .hangUp : .ok }
        defer { Task { await server.stop() } }
        let http = try HTTPDelivery(caFile: nil, timeout: .seconds(3))
        defer { http.shutdownNow() }
        #expect(try await post(http, server.url + "/a").status == 200)
        // NIO's server pipeline may hold the hang-up back while a response is owed (seen under load): then the
        // attempt ends at its timeout instead. Either way it fails, and the request is not sent again.
        do {
            _ = try await post(http, server.url + "/a")
            Issue.record("a hang-up answered")
        } catch {
            #expect(error as? HTTP1Error == .closedBeforeAnswer() || error is HTTPDelivery.TimedOut, "\(error)")
        }
        #expect(server.requests.count == 2)
        // The next request gets a new connection.
        #expect(try await post(http, server.url + "/a").status == 200)
        #expect(server.requests.count == 3 && server.requests[2].connection != server.requests[0].connection)
    }

    /// A kept-alive connection the server closed while it was idle is replaced. A request written before the client
    /// saw the close fails (it is not sent again: the server might have read it); the requests after it go on a new
    /// connection.
    @Test func anIdleConnectionClosedByTheServerIsReplaced() async throws {
        let server = try await TestHTTPServer.start()
        defer { Task { await server.stop() } }
        let http = try HTTPDelivery(caFile: nil, timeout: .seconds(10))
        defer { http.shutdownNow() }
        #expect(try await post(http, server.url + "/").status == 200)
        await server.closeConnections()
        do {
            _ = try await post(http, server.url + "/")
        } catch {
            // A close or a reset, as the client saw it: either way the request is not resent.
            #expect(server.requests.count <= 2, "\(error)")
        }
        for _ in 0..<3 { #expect(try await post(http, server.url + "/").status == 200) }
        let connections = server.requests.map(\.connection)
        #expect(Set(connections.dropFirst()).count == 1 && connections.last != connections.first)
    }

    /// A receiver that never answers costs the backend's timeout, said as such; a refused connection fails at once.
    @Test func timeoutsAndRefusals() async throws {
        let silent = try SilentListener()
        let http = try HTTPDelivery(caFile: nil, timeout: .milliseconds(300))
        defer { http.shutdownNow() }
        let start = ContinuousClock.now
        await #expect(throws: HTTPDelivery.TimedOut.self) { try await post(http, "http://127.0.0.1:\(silent.port)/") }
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        let down = try ReservedPort()
        // A timeout of its own: a loaded machine may take longer than 300 ms to report the refusal.
        let patient = try HTTPDelivery(caFile: nil, timeout: .seconds(10))
        defer { patient.shutdownNow() }
        do {
            _ = try await post(patient, "http://127.0.0.1:\(down.port)/")
            Issue.record("a refused connection answered")
        } catch {
            #expect("\(error)" == "cannot connect to http://127.0.0.1:\(down.port): Connection refused")
        }
        await #expect(throws: HTTP1Error.self) { try await post(http, "gopher://127.0.0.1/") }
    }

    /// 503 with Retry-After is a retry no sooner than asked; the answer's body (cut at the limit) says why.
    @Test func retryAfterIsRead() async throws {
        let server = try await TestHTTPServer.start { _, _ in
            .init(status: 503, headers: [("Retry-After", "7")], body: String(repeating: "busy ", count: 2000))
        }
        defer { Task { await server.stop() } }
        let http = try HTTPDelivery(caFile: nil, timeout: .seconds(10))
        defer { http.shutdownNow() }
        let answer = try await post(http, server.url + "/")
        #expect(answer.status == 503 && answer.body.utf8.count == 4096)
        guard case .retry(let reason, let after) = HTTPDelivery.result(answer, what: "hook") else {
            Issue.record("503 is not retried")
            return
        }
        #expect(after == .seconds(7) && reason.hasPrefix("hook answered HTTP 503: busy busy"))
        // The cut body closed that connection; the next request works on a new one.
        #expect(try await http.get(server.url + "/page", limit: 10).body == "busy busy ")
    }

    /// https with a `ca_file`: the server's certificate is checked against it (and its name), connections reused;
    /// without the CA the handshake fails.
    @Test func tlsWithACAFile() async throws {
        let certificates = try await TestCertificates.shared()
        let server = try await TestHTTPServer.start(tls: certificates.localhost)
        defer { Task { await server.stop() } }
        let http = try HTTPDelivery(caFile: certificates.caFile, timeout: .seconds(10))
        defer { http.shutdownNow() }
        for host in ["localhost", "localhost", "127.0.0.1"] {
            #expect(try await post(http, "https://\(host):\(server.port)/secure").status == 200)
        }
        #expect(Set(server.requests.map(\.connection)).count == 2)
        let other = try HTTPDelivery(caFile: certificates.otherCAFile, timeout: .seconds(10))
        defer { other.shutdownNow() }
        await #expect(throws: (any Error).self) { try await post(other, "https://localhost:\(server.port)/") }
        #expect(server.requests.count == 3)
    }
}
