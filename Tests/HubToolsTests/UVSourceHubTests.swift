import Foundation
import HubCore
import HubSupport
import HubTestKit
import Logging
import Mosquitto
import Testing

/// hubd's UV source end to end: a real broker, a local server serving a TEMIS-shaped page → the UV index on its
/// own topic → back into the registry as a numeric sensor whose status is WHO's band; the page failing keeps the
/// last ozone column (and the fetches are counted in `hubctl status` and `/metrics`), and a restart keeps it too.
@Suite(.timeLimit(.minutes(3)))
struct UVSourceHubTests {
    static let place = GeoPoint(latitude: 52.1, longitude: 5.18)!
    static let topic = "sensorhub/uv/uv index"

    /// The page with its first row today at the place (its mean solar date, as the source reckons it).
    static func page() -> String {
        let today = CalendarDay(Date(), offset: place.longitude * 240)
        return UVFixtures.temisPage(year: today.year, month: today.month, day: today.day)
    }

    static func json(_ message: MQTTMessage) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]) ?? [:]
    }

    @Test func publishesTheBandKeepsTheLastOzoneAndSurvivesARestart() async throws {
        let failing = Locked(false)
        let server = try await TestHTTPServer.start { _, _ in
            failing.withLock { $0 } ? .init(status: 503, body: "down") : .init(body: Self.page())
        }
        try await withBroker { broker in
            let hub = try RunningHub(
                configuration: """
                    uv:
                      latitude: 52.1
                      longitude: 5.18
                      interval: 1s
                      temis: \(server.url)/uvradiation/nrt/uvindex.php
                      temis_refresh: 1s
                    """)
            try await hub.prepare(broker)
            try await withListener(broker, subscribing: "sensorhub/uv/#") { messages in
                let address = try await hub.startAndWaitForHTTP()

                // The reading, with today's ozone column from the page.
                let first = try await messages.next(within: .seconds(15), "a reading with TEMIS's ozone") {
                    $0.topic == Self.topic && Self.json($0)["ozone_source"] as? String == "temis"
                }
                let json = Self.json(first)
                #expect(json["ozone"] as? Double == 324.5)
                #expect(json["uvi"] is Double && json["max_today"] is Double)
                #expect((json["forecast"] as? [[String: Any]])?.count == 4)
                let requests = try await server.waitForRequests(1)
                #expect(requests.first?.path.hasPrefix("/uvradiation/nrt/uvindex.php") == true)

                // In the registry: a numeric sensor with WHO's bands, its status the band of its value.
                try await eventually("the registry's UV sensor") {
                    guard let sensor = try hub.sensor("uv index"), let value = sensor.value else { return false }
                    return sensor.kind == .numeric && sensor.format.bands == .whoUV && sensor.format.unit == "UVI"
                        && sensor.topic == Self.topic && sensor.status == ValueBands.whoUV.name(for: value)
                        && sensor.attributes["ozone"] == .number(324.5)
                }

                // The page fails: the last good ozone stays, and the payload says the page failed.
                failing.withLock { $0 = true }
                let kept = try await messages.next(within: .seconds(15), "a reading after the page failed") {
                    $0.topic == Self.topic && (Self.json($0)["temis_failures"] as? Int ?? 0) >= 1
                }
                let failed = Self.json(kept)
                #expect(failed["ozone"] as? Double == 324.5 && failed["ozone_source"] as? String == "temis")
                #expect(failed["temis_error"] as? String == "HTTP 503")
                try await hub.waitForLog("the TEMIS page failed; keeping the last good values")
                try await eventually("the sensor shows the failure") {
                    try hub.sensor("uv index")?.attributes["temis_error"] == .string("HTTP 503")
                }
                // Counted for hubctl status and /metrics: fetches, failures, the last error, the last good fetch.
                try await eventually("the TEMIS counters in the status file") {
                    guard let temis = hub.status?.counters.temis else { return false }
                    return temis.failures >= 1 && temis.fetches > temis.failures && temis.lastError == "HTTP 503"
                        && temis.lastGoodFetch != nil
                }
                let status = try await hub.hubctl.run("status").standardOutput
                #expect(status.contains("UV TEMIS: ") && status.contains("; last error: HTTP 503"), "\(status)")
                let statusJSON = try await hub.hubctl.run("status", "--json").standardOutput
                let answer = try JSONSerialization.jsonObject(with: Data(statusJSON.utf8)) as? [String: Any]
                let temis = answer?["temis"] as? [String: Any]
                #expect(
                    temis?["lastError"] as? String == "HTTP 503" && temis?["lastGoodFetch"] is String, "\(statusJSON)")
                let metrics = try await NumericSensorTests().get("http://\(address)/metrics").body
                for name in [
                    "sensorhub_uv_temis_fetches_total ", "sensorhub_uv_temis_failures_total ",
                    "sensorhub_uv_temis_last_good_fetch_seconds ",
                ] {
                    #expect(metrics.contains(name), "\(name) in \(metrics)")
                }

                // A restart with the page still failing: the page kept in the state directory gives the ozone.
                // (The new hubd's first failure may be logged before it is ready, among the lines that wait reads:
                // its counters say it instead. The old hubd's status file goes, so they are the new one's.)
                await hub.stop()
                #expect(FileManager.default.fileExists(atPath: hub.hubctl.state.file("uv-temis.html")))
                unlink(hub.hubctl.state.file(AgentStatus.fileName))
                try await hub.startAndWaitUntilReady()
                try await eventually("a failed fetch after the restart") {
                    (hub.status?.counters.temis?.failures ?? 0) >= 1 && hub.status?.counters.temis?.lastGoodFetch != nil
                }
                try await hub.waitForLog("published the UV index", "ozone=324.5", "ozone_source=temis")
            }
            await hub.stop()
            // Registered once, whatever the restarts.
            #expect(try hub.registry().sensors.filter { $0.name == "uv index" }.count == 1)
        }
        await server.stop()
    }
}
