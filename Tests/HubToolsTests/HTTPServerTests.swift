import AsyncHTTPClient
import Foundation
import HubTestKit
import NIOCore
import Testing

/// hubd's HTTP server (issue 38 replaced Hummingbird's `Application.run()`, whose one-second date timer woke an idle
/// hub eight times a second): a real hubd answers with a current `Date` and its `Server` name, answers a malformed
/// request with 400 and closes that connection, and goes on answering others.
@Suite struct HTTPServerTests {
    @Test func headersAndAMalformedRequest() async throws {
        try await withBroker { broker in
            let hub = try RunningHub()
            try await hub.prepare(broker, sensors: ["front door"])
            let address = try await hub.startAndWaitForHTTP()
            let response = try await HTTPClient.shared.execute(
                authorized(HTTPClientRequest(url: "http://\(address)/api/v1/sensors")), timeout: .seconds(30))
            #expect(response.status.code == 200)
            #expect(response.headers["server"] == ["SensorHub"])
            let date = try #require(response.headers["date"].first)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let parsed = try #require(formatter.date(from: date), "not an IMF-fixdate: \(date)")
            #expect(abs(parsed.timeIntervalSinceNow) < 5, "\(date)")
            _ = try await response.body.collect(upTo: 1 << 20)

            // Raw bytes that are no HTTP request: 400, then the connection ends.
            let (port, host) = (Int(address.split(separator: ":").last!)!, "127.0.0.1")
            let (answer, closed) = try rawExchange(host: host, port: port, Array("GARBAGE\r\n\r\n".utf8))
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(closed, "the server kept the connection open")
            let again = try await HTTPClient.shared.execute(
                authorized(HTTPClientRequest(url: "http://\(address)/api/v1/sensors")), timeout: .seconds(30))
            #expect(again.status.code == 200)
            _ = try await again.body.collect(upTo: 1 << 20)
            await hub.stop()
        }
    }

    /// Writes `bytes` on a new TCP connection and reads until the server closes it (10 s at most): what came, and
    /// whether the server closed the connection (rather than the wait running out).
    private func rawExchange(host: String, port: Int, _ bytes: [UInt8]) throws -> (String, closed: Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #expect(write(fd, bytes, bytes.count) == bytes.count)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var count = 0
        repeat {
            count = read(fd, &buffer, buffer.count)
            if count > 0 { received += buffer[0..<count] }
        } while count > 0
        return (String(decoding: received, as: UTF8.self), count == 0)
    }
}
