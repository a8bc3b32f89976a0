import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// OpenAQ v3 end to end: a local server plays api.openaq.org (a location and its latest measurements, dated for
/// conditional requests; a rate limit) → hubd's feed source, with the key from `api_key_file` → the location's
/// virtual sensor → history.
@Suite struct OpenAQHubTests {
    /// What the fake OpenAQ serves now.
    struct Served: Sendable {
        var utc = "2024-05-01T16:00:00Z"
        var pm25 = 123.6
        var pm10 = 261.8
        /// Answer every request with this status (and `Retry-After`, when set) instead.
        var failure: Int?
        var retryAfter: String?
        /// When the requests answered with `failure` came.
        var refused: [ContinuousClock.Instant] = []
    }

    static let key = "openaq-test-key"

    @Test func aLocationIsPublishedWithItsKeyAndRateLimitsAreRetried() async throws {
        let served = Locked(Served())
        let server = try await TestHTTPServer.start { request, _ in
            let now = served.withLock { served in
                if served.failure != nil { served.refused.append(request.received) }
                return served
            }
            guard request.header("X-API-Key") == Self.key else { return .init(status: 401, body: "no key") }
            if let failure = now.failure {
                return .init(status: failure, headers: now.retryAfter.map { [("Retry-After", $0)] } ?? [])
            }
            let json = [("Content-Type", "application/json")]
            // Latest is dated (Last-Modified, no ETag) by its hour: If-Modified-Since that date is answered 304.
            let modified = "Wed, 01 May 2024 \(now.utc.dropFirst(11).prefix(8)) GMT"
            switch request.path {
            case "/v3/locations/2178": return .init(headers: json, body: FeedFixtures.openAQLocation)
            case "/v3/locations/2178/latest":
                if request.header("If-Modified-Since") == modified { return .init(status: 304) }
                return .init(
                    headers: json + [("Last-Modified", modified)],
                    body: FeedFixtures.openAQLatest(utc: now.utc, pm25: now.pm25, pm10: now.pm10))
            default: return .init(status: 404, body: #"{"detail":"Not Found"}"#)
            }
        }
        try await withBroker { broker in
            let hub = try RunningHub(
                configuration: """
                    feeds:
                      abq:
                        format: openaq
                        url: \(server.url)
                        locations: [2178]
                        api_key_file: openaq.key
                        interval: 1s
                    """)
            try "\(Self.key)\n".write(toFile: hub.hubctl.state.file("openaq.key"), atomically: true, encoding: .utf8)
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            func counters() -> AgentStatus.FeedCounters { hub.status?.counters.feeds?["abq"] ?? .init() }

            // The location is a numeric sensor named after it; its status is the US AQI band of the worse of PM2.5
            // (123.6 µg/m³ → 199) and PM10 (261.8 µg/m³ → 154).
            try await eventually("the location's sensor") { try hub.sensor("abq-del-norte")?.status == "Unhealthy" }
            let sensor = try #require(try hub.sensor("abq-del-norte"))
            #expect(sensor.kind == .numeric && sensor.topic == "sensorhub/feeds/abq/del-norte")
            #expect(sensor.format.bands == .usAQI && sensor.format.unit == "AQI")
            let attributes = Dictionary(uniqueKeysWithValues: sensor.attributes.map { ($0.name, $0.value) })
            #expect(attributes["pm25"] == .number(123.6) && attributes["pm10"] == .number(261.8))
            #expect(attributes["latitude"] == .number(35.1353))
            #expect(attributes["time"] == .string("2024-05-01T16:00:00.000Z"))
            // Every request carried the key; the location was asked for once, its latest at every poll, conditionally
            // with the date it came with, and the 304s count as not modified.
            try await eventually("304s") { counters().notModified >= 2 }
            #expect(
                server.requests.contains { $0.header("If-Modified-Since") == "Wed, 01 May 2024 16:00:00 GMT" }
                    && !server.requests.contains { $0.header("If-None-Match") != nil })
            #expect(!server.requests.isEmpty && server.requests.allSatisfy { $0.header("X-API-Key") == Self.key })
            #expect(server.requests.count { $0.path == "/v3/locations/2178" } == 1)

            // Rate limited: each 429 a failed poll, retried until the server answers again, never sooner than its
            // Retry-After (3 s, where the back-off from a 1 s interval alone would be 1 s, then 2 s).
            served.withLock {
                $0.failure = 429
                $0.retryAfter = "3"
            }
            try await hub.waitForLog("a feed could not be read", "HTTP 429")
            try await eventually("two failed polls", within: .seconds(20)) { counters().failures >= 2 }
            #expect(counters().lastProblem?.contains("HTTP 429") == true)
            let refused = served.withLock { $0.refused }
            #expect(zip(refused, refused.dropFirst()).allSatisfy { $1 - $0 >= .seconds(3) }, "\(refused)")
            served.withLock {
                $0.failure = nil
                $0.utc = "2024-05-01T17:00:00Z"
                $0.pm25 = 8
                $0.pm10 = 40
            }
            // (The status file's counters are written now and then: waited for, not read once.)
            try await eventually("the next hour", within: .seconds(20)) {
                try hub.sensor("abq-del-norte")?.status == "Good" && counters().published == 2
            }
            await hub.stop()
            #expect(try await FeedHubTests().readings("abq-del-norte", hub) == [199, 44])
        }
        await server.stop()
    }
}
