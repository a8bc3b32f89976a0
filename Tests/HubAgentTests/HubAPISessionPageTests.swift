import Dispatch
import Foundation
import HTTPTypes
import HubCore
import HubSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HubAgent

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Issue 21: starting and stopping a session through the API, and the dashboard's session pages (the map, its
/// colours and scale, the chart, the links), with hostile text escaped.
extension HubAPITests {
    /// A tracker following the seeded registry with `walk*` mobile, kept in a lock as ingest keeps it.
    func mobileTracker() throws -> Locked<SensorTracker> {
        var tracker = SensorTracker()
        tracker.setSessionRules([SessionRule(sensors: ["walk*"], gap: nil)])
        _ = tracker.follow(try store.read(), now: .now)
        return Locked(tracker)
    }

    @Test func sessionsAreStartedAndStoppedThroughTheAPI() async throws {
        try await seedSessions()
        let live = try mobileTracker()
        let control: @Sendable (SessionAction, String) -> SensorTracker.Outcome = { action, name in
            live.withLock { tracker in
                guard let topic = tracker.topic(ofSensor: name) else { return .rejected(.unknownTopic) }
                return tracker.session(action, topic: topic, time: .now)
            }
        }
        let hub = self.hub
        try await withClient(token: "s3cret", session: control) { client in
            func post(_ name: String, _ body: String, token: String = "s3cret") async throws -> (
                HTTPResponse.Status, [String: Any]
            ) {
                try await client.execute(
                    uri: "/api/v1/sensors/\(name)/session", method: .post, headers: [.authorization: "Bearer \(token)"],
                    body: ByteBuffer(string: body)
                ) { ($0.status, (try? decode($0.body) as? [String: Any]) ?? [:]) }
            }
            func states(_ answer: [String: Any]) -> [String?] {
                ((answer["events"] as? [[String: Any]]) ?? []).map { $0["to"] as? String }
            }
            #expect(try await post("walker", #"{"action":"start"}"#, token: "wrong").0 == .unauthorized)
            let (status, started) = try await post("walker", #"{"action":"start"}"#)
            #expect(status == .ok && started["changed"] as? Bool == true && started["recording"] as? Bool == true)
            #expect(states(started) == ["recording"])
            let id = try #require(started["session"] as? String)
            #expect((started["events"] as? [[String: Any]])?.first?["detail"] as? String == id)

            // The sensor's JSON says it is mobile and recording.
            hub.withLock { $0.take(live.withLock { $0 }, statuses: true) }
            try await client.execute(
                uri: "/api/v1/sensors/walker", method: .get, headers: [.authorization: "Bearer s3cret"]
            ) {
                let sensor = try #require(try decode($0.body) as? [String: Any])
                #expect(sensor["mobile"] as? Bool == true)
                #expect((sensor["session"] as? [String: Any])?["id"] as? String == id)
            }
            try await client.execute(
                uri: "/api/v1/sensors", method: .get, headers: [.authorization: "Bearer s3cret"]
            ) {
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["mobile"] as? Bool } == [nil, true])
            }

            // A start while recording ends the open session first; a stop ends it; a second stop changes nothing.
            let again = try await post("walker", #"{"action":"start"}"#).1
            #expect(states(again) == ["idle", "recording"] && again["session"] as? String != id)
            let stopped = try await post("WALKER", #"{"action":"stop"}"#).1
            #expect(states(stopped) == ["idle"] && stopped["recording"] as? Bool == false)
            let (unchangedStatus, unchanged) = try await post("walker", #"{"action":"stop"}"#)
            #expect(unchangedStatus == .ok && unchanged.count == 1 && unchanged["changed"] as? Bool == false)

            let (fixedStatus, fixed) = try await post("balcony", #"{"action":"start"}"#)
            #expect(fixedStatus == .conflict)
            #expect((fixed["error"] as? String)?.contains("sessions: in hubd.yaml") == true, "\(fixed)")
            #expect(try await post("nobody", #"{"action":"start"}"#).0 == .notFound)
            for body in [#"{"action":"pause"}"#, "{}", #"{"action":"start","at":1}"#, "[", #"{"action":1}"#] {
                #expect(try await post("walker", body).0 == .badRequest, "\(body)")
            }
        }
        // An API with no hub behind it can't record.
        try await withClient { client in
            try await client.execute(
                uri: "/api/v1/sensors/walker/session", method: .post, body: ByteBuffer(string: #"{"action":"start"}"#)
            ) { #expect($0.status == .serviceUnavailable) }
        }
    }

    /// `<line class="segment" …>`s of a page: their ends and colour.
    static func segments(_ html: String) -> [(x1: Double, y1: Double, x2: Double, y2: Double, colour: String)] {
        html.matches(
            of:
                /<line class="segment" x1="([-\d.]+)" y1="([-\d.]+)" x2="([-\d.]+)" y2="([-\d.]+)" stroke="(#[0-9a-f]{6})"/
        ).map { (Double($0.1)!, Double($0.2)!, Double($0.3)!, Double($0.4)!, String($0.5)) }
    }

    @Test func aSessionPageDrawsItsTrackColouredByPM25WithItsChart() async throws {
        try await seedSessions()
        let live = try mobileTracker()
        hub.withLock { $0.take(live.withLock { $0 }, statuses: true) }
        try await withClient { client in
            try await client.execute(uri: "/sessions/\(Self.walkID)", method: .get) {
                #expect($0.status == .ok && $0.headers[.contentType] == "text/html; charset=utf-8")
                let html = String(buffer: $0.body)
                #expect(html.contains(#"<svg xmlns="http://www.w3.org/2000/svg" class="session-map""#))
                // A line per step, in the AQI colour of the PM2.5 it starts with: 5 is Good, 20 Moderate.
                let lines = Self.segments(html)
                #expect(lines.map(\.colour) == ["#00e400", "#ffff00"])
                #expect(lines.count == 2)
                if lines.count == 2 {
                    // North up; 100 m north and 100 m east are as long on the map (longitude scaled by cos φ).
                    #expect(lines[0].x1 == lines[0].x2 && lines[0].y2 < lines[0].y1)
                    #expect(lines[1].y1 == lines[1].y2 && lines[1].x2 > lines[1].x1)
                    let north = lines[0].y1 - lines[0].y2
                    let east = lines[1].x2 - lines[1].x1
                    #expect(abs(north - east) <= 0.25, "\(north) \(east)")
                    // Fitted with a margin: the track spans the map's height less two margins.
                    #expect(abs(north - (MapFrame.mapHeight - 2 * MapFrame.margin)) <= 0.25)
                }
                #expect(html.contains(#"<circle class="start""#) && html.contains(#"<circle class="end""#))
                // A quarter of the width is 160 px; 3.44 px a metre makes that 46 m: the bar is 20 m.
                #expect(html.contains(#"<text class="scale-label""#) && html.contains(">20 m</text>"))
                #expect(html.contains("Good · PM2.5 0–9 µg/m³") && html.contains("Hazardous · PM2.5 ≥ 225.5 µg/m³"))
                // Nothing from elsewhere: the page works offline.
                #expect(!html.contains(#"src="http"#) && !html.contains(#"href="http"#) && !html.contains("<img"))
                // The figures and the chart over time.
                #expect(html.contains("<dt>Distance</dt><dd>200 m</dd>") && html.contains("<dd>20 s</dd>"))
                #expect(html.contains("<dd>5 / 21.7 / 40 µg/m³</dd>"))
                #expect(html.contains(#"<polyline class="series""#) && html.contains("WHO 24 h guideline 15"))
                #expect(html.contains(#"href="/api/v1/sessions/00000000000a-2/track?format=gpx""#))
                #expect(html.contains(#"<a href="/sessions/00000000000a-4">"#))
            }
            try await client.execute(uri: "/sessions/\(Self.stillID)", method: .get) {
                let html = String(buffer: $0.body)
                #expect(html.contains(#"<p class="no-positions">"#) && !html.contains("session-map"))
                #expect(html.contains("<dd>still recording</dd>"))
            }
            try await client.execute(uri: "/sessions?sensor=walker", method: .get) {
                let html = String(buffer: $0.body)
                #expect(html.contains("<h1>Sessions of walker</h1>"))
                #expect(html.contains(#"<a href="/sessions/00000000000a-2">"#) && html.contains("<td>recording</td>"))
            }
            // The home page's script links a mobile sensor's card to its sessions (DashboardBrowserTests): the list
            // says which are mobile.
            try await client.execute(uri: "/api/v1/sensors", method: .get) {
                let list = try #require(
                    try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [[String: Any]])
                #expect(list.filter { $0["mobile"] as? Bool == true }.map { $0["name"] as? String } == ["walker"])
            }
        }
    }

    @Test func hostileSensorNamesAreEscapedOnSessionPages() async throws {
        let hostile = #"<script>alert("x")</script>&"#
        try await seedSessions(walker: hostile)
        let escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;"
        try await withClient { client in
            for uri in ["/sessions/\(Self.walkID)", "/sessions"] {
                try await client.execute(uri: uri, method: .get) {
                    let html = String(buffer: $0.body)
                    #expect(!html.contains("<script>alert") && html.contains(escaped), "\(uri)")
                }
            }
            try await client.execute(uri: "/api/v1/sessions/\(Self.walkID)/track?format=gpx", method: .get) {
                let name = try #require($0.headers[.contentDisposition])
                #expect(name.hasPrefix(#"attachment; filename="_script_alert__x____script__-"#), "\(name)")
                let parser = XMLParser(data: Data(buffer: $0.body))
                #expect(parser.parse())
            }
        }
    }

    @Test func aLongTrackIsThinnedAndATrackWithoutPM25IsGrey() async throws {
        // 10,001 readings a metre apart, PM2.5 alternating 5 and 60: 2,500 lines of 4 steps, each Unhealthy.
        let (count, stride, colours, chart) = await DispatchQueue.global().run {
            let track = (0...10_000).map { index in
                TrackPoint(
                    time: Timestamp(millisecondsSince1970: Int64(index) * 1000),
                    position: GeoFix(point: GeoPoint(latitude: 1.3 + Double(index) * 1e-5, longitude: 103.8)!),
                    pm25: index % 2 == 0 ? 5 : 60)
            }
            let (steps, stride) = SessionMap(track).segments
            let summary = SessionSummary(
                id: "x", sensor: "walker", started: track[0].time, ended: track.last!.time, readings: track.count)
            return (
                steps.count, stride, Set(steps.map { SessionMap.colour(pm25: $0.pm25) }),
                HubAPI.sessionChart(summary, track)
            )
        }
        #expect(count == 2500 && stride == 4 && colours == [AQI.category(pm25: 60).hex])
        // The chart over time: the means of 1,000 spans of 10 s, not 10,001 points.
        let chartPoints = try #require(chart.firstMatch(of: /<polyline class="series" points="([^"]*)"/)?.1)
        #expect(chartPoints.split(separator: " ").count == HubAPI.chartPoints)
        let means = HubAPI.means([(0, 5), (1, 60), (10, 7)], from: 0, to: 20, count: 2)
        #expect(means.map(\.0) == [5, 15] && means.map(\.1) == [32.5, 7])
        #expect(AQI.category(pm25: 60).name == "Unhealthy")

        let numeric = [0, 1].map { index in
            TrackPoint(
                time: Timestamp(millisecondsSince1970: Int64(index) * 1000),
                position: GeoFix(point: GeoPoint(latitude: 1.3, longitude: 103.8 + Double(index) * 1e-3)!), value: 50)
        }
        let svg = SessionMap(numeric).svg(title: "noise") ?? ""
        #expect(Self.segments(svg).map(\.colour) == [SessionMap.noPM25Colour] && svg.contains("grey: no PM2.5"))
        let single = SessionMap([numeric[0]]).svg(title: "one") ?? ""
        #expect(Self.segments(single).isEmpty && single.contains(#"class="start""#))
        #expect(SessionMap([TrackPoint(time: .now, position: nil, pm25: 3)]).svg(title: "none") == nil)
        #expect([0.5, 46, 130, 260, 999, 1200].map(MapFrame.scaleLength(for:)) == [1, 20, 100, 200, 500, 1000])
    }
}
