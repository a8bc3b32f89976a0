import Foundation
import HubCore
import HubHistory
import HubSupport
import HubTestKit
import HummingbirdTesting
import NIOCore
import Testing

@testable import HubAgent

extension HubAPITests {
    /// Issue 17: a numeric sensor's value and unit, and devices' attributes, in the API and on the dashboard (device
    /// text escaped, the script writing it as text); its chart from the history, and none for a status sensor.
    @Test func numericValuesAttributesAndTheirCharts() async throws {
        let registry = """
            {"schemaVersion": 1, "sensors": [
             {"name": "cellar", "topic": "z/cellar", "status": "Waiting", "added": "2026-11-02T00:00:00.000Z",
              "kind": "numeric", "value": "temperature", "unit": "°C"},
             {"name": "hall", "topic": "z/hall", "status": "Waiting", "added": "2026-11-02T00:00:00.000Z",
              "value": "contact", "map": "true=closed,false=open"}]}
            """
        try registry.write(toFile: store.path, atomically: true, encoding: .utf8)
        var tracker = SensorTracker()
        _ = tracker.follow(try store.read(), now: .now)
        let now = Timestamp.now
        let cellar = #"{"temperature":12.5,"battery":80,"note":"<b>x</b>\u001b[2J"}"#
        for (topic, payload) in [("z/cellar", cellar), ("z/hall", #"{"contact":true,"battery":97}"#)] {
            _ = tracker.ingest(topic: topic, payload: Array(payload.utf8), retained: false, time: now, now: .now)
        }
        hub.withLock {
            $0.take(tracker, statuses: true)
            // A threshold on the cellar's value, one on an attribute (not drawn), one on another sensor.
            $0.thresholds = [
                ThresholdRule(name: "cellar too cold", sensors: ["cell*"], limit: ThresholdLimit(below: 5)),
                ThresholdRule(name: "battery low", attribute: "battery", limit: ThresholdLimit(below: 15)),
                ThresholdRule(name: "hall too hot", sensors: ["hall"], limit: ThresholdLimit(above: 30)),
            ]
        }
        let history = try History(directory: directory.path)
        let earlier = Timestamp(millisecondsSince1970: now.millisecondsSince1970 - 60_000)
        try await history.record(
            readings: [
                RecordedReading(sensor: "cellar", reading: .numeric(12, unit: "°C", time: earlier)),
                RecordedReading(sensor: "cellar", reading: .numeric(12.5, unit: "°C", time: now)),
            ],
            events: [])

        try await withClient { client in
            try await client.execute(uri: "/api/v1/sensors", method: .get) {
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["name"] as? String } == ["cellar", "hall"])
                #expect(list[0]["value"] as? Double == 12.5 && list[0]["unit"] as? String == "°C")
                let attributes = try #require(list[0]["attributes"] as? [String: Any])
                #expect(attributes["battery"] as? Int == 80)
                // Kept escaped from the payload on: shown as it is everywhere.
                #expect(attributes["note"] as? String == #"<b>x</b>\u{1B}[2J"#)
                #expect(list[1]["status"] as? String == "closed" && list[1]["value"] == nil && list[1]["unit"] == nil)
                #expect((list[1]["attributes"] as? [String: Any])?["battery"] as? Int == 97)
                #expect(UnsafeText.firstUnsafe(in: String(buffer: $0.body)) == nil)
            }
            try await client.execute(uri: "/", method: .get) {
                let html = String(buffer: $0.body)
                // The sensors are drawn by the page's script from /api/v1/sensors (DashboardBrowserTests shows the
                // attributes as text there); the page itself carries no device text but the charts' names.
                #expect(!html.contains("<b>x") && !html.contains("note"))
                #expect(UnsafeText.firstUnsafe(in: html, allowing: .lineBreak) == nil)
                // Charts: the numeric sensor's, no PM ones without a particulate sensor, none for the status sensor.
                #expect(html.contains(#"data-src="/dashboard/chart.json?sensor=cellar""#))
                #expect(!html.contains("chart-pm25") && !html.contains("sensor=hall"))
            }
            // The cards are built as elements, device text as textContent (the page's script, a file of its own).
            try await client.execute(uri: "/dashboard/app.js", method: .get) {
                let script = String(buffer: $0.body)
                #expect(script.contains("e.textContent = vis(v)") && !script.contains("innerHTML"))
            }
            // The same series as JSON, for the interactive chart: each reading over an hour, min = mean = max.
            try await client.execute(uri: "/dashboard/chart.json?sensor=cellar&period=hour", method: .get) {
                let answer = try #require(try decode($0.body) as? [String: Any])
                #expect(answer["title"] as? String == "cellar" && answer["unit"] as? String == "°C")
                // Its thresholds on the value, drawn dashed; an attribute's and another sensor's are not.
                let lines = try #require(answer["lines"] as? [[String: Any]])
                #expect(lines.map { $0["label"] as? String } == ["cellar too cold: below 5"])
                #expect(answer["fromZero"] as? Bool == false)
                let points = try #require(answer["points"] as? [[Double]])
                #expect(points.count == 2 && points.allSatisfy { $0.count == 4 && $0[1] == $0[2] && $0[2] == $0[3] })
            }
            try await client.execute(uri: "/dashboard/chart.svg?sensor=cellar&period=hour", method: .get) {
                let svg = String(buffer: $0.body)
                #expect(svg.contains("cellar °C · last hour") && !svg.contains("WHO"))
                let points = try #require(svg.firstMatch(of: /<polyline class="series" points="([^"]*)"/)?.1)
                #expect(points.split(separator: " ").count == 2, "\(svg)")
            }
            try await client.execute(uri: "/dashboard/chart.svg?sensor=hall", method: .get) {
                #expect($0.status == .badRequest)
                #expect(error($0.body) == "'hall' is a status sensor: it has no readings to chart")
            }
            try await client.execute(uri: "/dashboard/chart.svg?sensor=nobody", method: .get) {
                #expect($0.status == .notFound && error($0.body) == "no sensor named 'nobody'")
            }
        }
    }
}
