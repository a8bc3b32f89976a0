import AsyncHTTPClient
import Foundation
import HubCore
import HubHistory
import HubTestKit
import NIOCore
import Testing

/// The least-polluted route end to end: a mobile particulate sensor publishes the synthetic city's readings with
/// their positions over a real broker → hubd keeps them in the history → `GET /api/v1/route` of that hubd, with
/// `route.roads` in its hubd.yaml, and `hubctl route` beside it, go around the hotspot.
@Suite(.timeLimit(.minutes(3)))
struct RouteHubTests {
    static let topic = "bike/air"

    @Test func aRunningHubPlansAlongTheConfiguredRoads() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "route:\n  roads: streets.geojson\n")
            try RouteFixtures.streetGrid().write(
                toFile: hub.hubctl.state.file("streets.geojson"), atomically: true, encoding: .utf8)
            try await hub.prepare(broker)
            try await hub.add(arguments: [["bike", "--kind", "particulate", "--topic", Self.topic]])
            let address = try await hub.startAndWaitForHTTP()
            let city = RouteFixtures.hotspot()
            // One a second, stamped by the sensor as an AirBeam does: the hub takes a reading only when it is newer
            // than the last (a retained replay is not), and a burst arrives within the same millisecond.
            let first = Timestamp.now.millisecondsSince1970 - Int64(city.count) * 1000
            let readings = city.enumerated().map { index, reading in
                let time = Timestamp(millisecondsSince1970: first + Int64(index) * 1000).iso8601
                let payload =
                    #"{"pm25":\#(reading.pm25),"lat":\#(reading.latitude),"lon":\#(reading.longitude),"#
                    + #""time":"\#(time)"}"#
                return (Self.topic, Array(payload.utf8))
            }
            let world = GeoBoundingBox(south: -90, west: -180, north: 90, east: 180)
            let since = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 3_600_000)
            // In parts the broker can hold: 1,681 at once are more than Mosquitto keeps for a client by default (1,000
            // queued and 200 in flight), so the whole depended on how fast a debug hubd drains a burst on a loaded
            // machine (BurstTests is about bursts; this test is about routes).
            var sent = 0
            for part in stride(from: 0, to: readings.count, by: 600) {
                let chunk = Array(readings[part..<min(part + 600, readings.count)])
                try await publish(broker, chunk)
                sent += chunk.count
                try await eventually(
                    "the first \(sent) readings in the history with their positions", within: .seconds(60)
                ) {
                    // hubd creates the file when it starts, and commits every `history.commit_interval`: asked, at
                    // once.
                    WriteRequest.ask(directory: hub.hubctl.state.path)
                    let history = try? History(directory: hub.hubctl.state.path, create: false)
                    return (try? history?.pollutionReadings(in: world, since: since).matched) == sent
                }
            }

            let (from, to) = (RouteFixtures.text(RouteFixtures.start), RouteFixtures.text(RouteFixtures.end))
            let answer = try await get("http://\(address)/api/v1/route?from=\(from)&to=\(to)&weight=0.05")
            #expect(answer.status == 200, "\(answer.body)")
            let feature = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            let properties = try #require(feature["properties"] as? [String: Any])
            // Along the streets (route.roads): the straight street is exactly 1,600 m, through the hotspot.
            let shortest = try #require(properties["shortest_length_m"] as? Double)
            #expect(abs(shortest - 1600) < 5, "\(properties)")
            #expect((properties["length_m"] as? Double ?? 0) > shortest)
            #expect(
                (properties["exposure"] as? Double ?? .infinity) < (properties["shortest_exposure"] as? Double ?? 0))
            #expect((properties["readings"] as? Int ?? 0) > 1000)
            let bad = try await get("http://\(address)/api/v1/route?from=\(from)&to=\(to)&cell=1")
            #expect(bad.status == 400 && bad.body.contains("allowed"), "\(bad.body)")

            // hubctl reads the same history while hubd writes it (across the grid: it has no road file).
            let text = try await hub.hubctl.run("route", "--from", from, "--to", to, "--sensors", "bike")
            #expect(text.status == 0, "\(text.standardError)")
            #expect(text.standardOutput.contains("The detour:") && text.standardOutput.contains("% exposure"))
            await hub.stop()
        }
    }

    func get(_ url: String) async throws -> (status: UInt, body: String) {
        let response = try await HTTPClient.shared.execute(
            authorized(HTTPClientRequest(url: url)), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return (response.status.code, String(buffer: body))
    }
}
