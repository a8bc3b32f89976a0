import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

/// A regional air-quality feed end to end: a local server plays data.gov.sg (a changing NEA document, an error
/// phase, a repeated and an older timestamp) → hubd's feed source → its own topics → virtual sensors → history;
/// the history's counts prove nothing is stored twice, across a restart too.
@Suite struct FeedHubTests {
    /// What the fake data.gov.sg serves now.
    struct Served: Sendable {
        var hour = "2020-12-15T08:00:00+08:00"
        var west: Double = 54
        /// Answer every request with this status instead.
        var failure: Int?
        /// Serve this body instead of the documents.
        var body: String?
        /// Changes with every new document, so a conditional request gets 304 only while it stays.
        var version = 1
    }

    @Test func readingsArePublishedOnceAcrossRepeatsErrorsAndARestart() async throws {
        let served = Locked(Served())
        let server = try await TestHTTPServer.start { request, _ in
            let now = served.withLock { $0 }
            if let failure = now.failure { return .init(status: failure, body: "overloaded") }
            let etag = "\"v\(now.version)\""
            if request.header("If-None-Match") == etag { return .init(status: 304, headers: [("ETag", etag)]) }
            let psi = ["west": now.west, "national": 57, "east": 48, "central": 57, "south": 50, "north": 52]
            let body =
                now.body
                ?? (request.path.hasPrefix("/psi")
                    ? FeedFixtures.psi(hour: now.hour, updated: now.hour, psi: psi)
                    : FeedFixtures.pm25(hour: now.hour, updated: now.hour))
            return .init(status: 200, headers: [("ETag", etag), ("Content-Type", "application/json")], body: body)
        }
        func serve(_ change: (inout Served) -> Void) {
            served.withLock {
                change(&$0)
                $0.version += 1
            }
        }
        try await withBroker { broker in
            let hub = try RunningHub(
                configuration: """
                    feeds:
                      sg:
                        format: nea
                        psi_url: \(server.url)/psi
                        pm25_url: \(server.url)/pm25
                        interval: 1s
                    """)
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            func counters() -> AgentStatus.FeedCounters { hub.status?.counters.feeds?["sg"] ?? .init() }
            /// The feed hour of a region's last reading (its status is the PSI band).
            func hour(_ region: String) throws -> SensorAttributes.Value? {
                try hub.sensor("sg-\(region)")?.attributes.first { $0.name == "time" }?.value
            }

            // Six regions, each a numeric sensor with its reading; coordinates and sub-indexes as attributes.
            try await eventually("the regions' sensors") {
                try hub.registry().sensors.filter { $0.name.hasPrefix("sg-") }.count == 6
                    && hub.sensor("sg-west")?.status == "Moderate"
            }
            let west = try #require(try hub.sensor("sg-west"))
            #expect(west.kind == .numeric && west.topic == "sensorhub/feeds/sg/west" && west.format.unit == "PSI")
            #expect(west.format.bands == .psi)
            #expect(try hub.sensor("sg-east")?.status == "Good")
            let attributes = Dictionary(uniqueKeysWithValues: west.attributes.map { ($0.name, $0.value) })
            #expect(attributes["latitude"] == .number(1.35735) && attributes["longitude"] == .number(103.7))
            #expect(attributes["pm25_one_hourly"] == .number(12))
            #expect(attributes["time"] == .string("2020-12-15T00:00:00.000Z"))
            #expect(try hub.sensor("sg-national")?.attributes.contains { $0.name == "latitude" } == false)

            // Unchanged: conditional requests answered 304, nothing published.
            try await eventually("304s") { counters().notModified >= 2 }
            #expect(server.requests.contains { $0.header("If-None-Match") == "\"v1\"" })

            // The next hour.
            serve {
                $0.hour = "2020-12-15T09:00:00+08:00"
                $0.west = 60
            }
            try await eventually("the next hour") { try hour("west") == .string("2020-12-15T01:00:00.000Z") }

            // An error phase, then a document that is not JSON: counted, logged, retried.
            serve { $0.failure = 503 }
            try await hub.waitForLog("a feed could not be read", "HTTP 503")
            serve {
                $0.failure = nil
                $0.body = "<html>maintenance</html>"
            }
            try await eventually("two failed polls", within: .seconds(20)) { counters().failures >= 2 }

            // The same hour served again as a new document, then an older hour: nothing published.
            serve { $0.body = nil }
            try await eventually("a repeat", within: .seconds(20)) { counters().repeated >= 6 }
            serve {
                $0.hour = "2020-12-15T07:00:00+08:00"
                $0.west = 99
            }
            try await hub.waitForLog("a feed's timestamp went backwards")
            try await eventually("older counted") { counters().older >= 6 && counters().published == 12 }
            #expect(try hour("west") == .string("2020-12-15T01:00:00.000Z"))
            let text = try await hub.hubctl.run("status")
            #expect(text.standardOutput.contains("Feed sg: "), "\(text.standardOutput)")
            await hub.stop()
            #expect(try await readings("sg-west", hub) == [54, 60])
            // The next hubd's counters, not these.
            unlink(hub.hubctl.state.file(AgentStatus.fileName))

            // A restart serving the hour already published: no new reading, no second sensor.
            serve {
                $0.hour = "2020-12-15T09:00:00+08:00"
                $0.west = 60
            }
            try await hub.startAndWaitUntilReady()
            try await eventually("a poll after the restart") { counters().repeated >= 6 }
            #expect(counters().published == 0)
            // The next hour is published as usual.
            serve {
                $0.hour = "2020-12-15T10:00:00+08:00"
                $0.west = 71
            }
            try await eventually("the hour after") { try hour("west") == .string("2020-12-15T02:00:00.000Z") }
            await hub.stop()
            #expect(try await readings("sg-west", hub) == [54, 60, 71])
            #expect(try await readings("sg-east", hub) == [48, 48, 48])
            #expect(try hub.registry().sensors.filter { $0.name.hasPrefix("sg-") }.count == 6)

            // A crash between publishing an hour and remembering it in the ledger: the next hubd, without the
            // ledger, publishes that hour again, and the hub, which has that hour's reading, stores no second one.
            // (Twelve messages: the six retained on subscribing, and the six published again.)
            unlink(hub.hubctl.state.file(FeedLedger.fileName))
            unlink(hub.hubctl.state.file(AgentStatus.fileName))
            try await hub.startAndWaitUntilReady()
            try await eventually("the hour published again, and taken in") {
                counters().published == 6 && (hub.status?.counters.messages ?? 0) >= 12
            }
            await hub.stop()
            #expect(try await readings("sg-west", hub) == [54, 60, 71])
        }
        await server.stop()
    }

    /// A generic JSON feed end to end: a station list in a shape of its own, read with the configured paths; its bad
    /// items refused and counted, its good ones published as sensors with the US AQI band, a new hour taken.
    @Test func aGenericJSONFeedIsReadWithItsPaths() async throws {
        let hour = Locked(10)
        let server = try await TestHTTPServer.start { request, _ in
            guard request.path == "/air.json" else { return .init(status: 404) }
            let now = hour.withLock { $0 }
            return .init(headers: [("Content-Type", "application/json")], body: FeedFixtures.stations(hour: now))
        }
        try await withBroker { broker in
            let hub = try RunningHub(
                configuration: """
                    feeds:
                      garden:
                        format: json
                        url: \(server.url)/air.json
                        interval: 1s
                        items: stations
                        region: id
                        time: at
                        value: aqi
                        latitude: lat
                        longitude: lon
                        metrics: {pm25: pm.pm25}
                    """)
            try await hub.prepare(broker)
            try await hub.startAndWaitUntilReady()
            func counters() -> AgentStatus.FeedCounters { hub.status?.counters.feeds?["garden"] ?? .init() }

            try await eventually("the stations' sensors") {
                try hub.sensor("garden-north-hill")?.status == "Good"
                    && hub.sensor("garden-harbour")?.status == "Moderate"
            }
            let north = try #require(try hub.sensor("garden-north-hill"))
            #expect(north.topic == "sensorhub/feeds/garden/north-hill" && north.format.bands == .usAQI)
            let attributes = Dictionary(uniqueKeysWithValues: north.attributes.map { ($0.name, $0.value) })
            #expect(attributes["pm25"] == .number(9.5) && attributes["latitude"] == .number(52.1))
            #expect(attributes["time"] == .string("2024-05-01T10:00:00.000Z"))
            #expect(try hub.registry().sensors.filter { $0.name.hasPrefix("garden-") }.count == 2)
            // The bad time, the absurd index and the item without a region, at every poll.
            try await eventually("refused items counted") { counters().rejected >= 3 && counters().repeated >= 2 }
            #expect(counters().lastProblem?.contains("stations[2]: at") == true, "\(counters())")

            hour.withLock { $0 = 11 }
            try await eventually("the next hour") {
                try counters().published == 4
                    && hub.sensor("garden-harbour")?.attributes.first { $0.name == "time" }?.value
                        == .string("2024-05-01T11:00:00.000Z")
            }
            await hub.stop()
            #expect(try await readings("garden-harbour", hub) == [61, 61])
        }
        await server.stop()
    }

    /// The values of a sensor's stored readings, oldest first.
    func readings(_ sensor: String, _ hub: RunningHub) async throws -> [Double] {
        let json = try await hub.hubctl.run("history", sensor, "--json")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any],
            "\(json.standardError)")
        return (answer["readings"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? Double }
    }
}
