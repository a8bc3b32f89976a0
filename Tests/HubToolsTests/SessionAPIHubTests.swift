import AsyncHTTPClient
import Foundation
import HubCore
import HubTestKit
import NIOCore
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A mobile sensor's recording session end to end (issue 21): hubd with `sessions:` naming the sensor and a real
/// broker; the API starts a session, the device publishes positioned readings, the API stops it, and the history's
/// session (through the API, its track and its page) has them, ended.
@Suite struct SessionAPIHubTests {
    /// Degrees of latitude in a metre.
    static let degreesPerMetre = 180 / (Double.pi * Geodesy.earthRadius)

    @Test func aSessionStartedAndStoppedThroughTheAPIKeepsItsPositionedReadings() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: "sessions:\n  - sensors: [walker]\n    gap: manual\n")
            try await hub.prepare(broker)
            try await hub.add(arguments: [["walker", "--kind", "particulate"], ["balcony", "--kind", "particulate"]])
            let topic = try #require(try hub.sensor("walker")?.topic)
            let address = try await hub.startAndWaitForHTTP()
            let base = "http://\(address)"

            let start = try await request("POST", "\(base)/api/v1/sensors/walker/session", #"{"action":"start"}"#)
            #expect(start.status == 200, "\(start.body)")
            let started = try object(start.body)
            let id = try #require(started["session"] as? String)
            #expect(started["changed"] as? Bool == true && started["recording"] as? Bool == true)

            // Three readings 100 m apart: north, then east (a degree of longitude shrunk by cos φ).
            let (latitude, longitude) = (47.37, 8.54)
            let north = latitude + 100 * Self.degreesPerMetre
            let east = longitude + 100 * Self.degreesPerMetre / cos(north * .pi / 180)
            let payloads = [
                #"{"pm25": 4, "lat": \#(latitude), "lon": \#(longitude)}"#,
                #"{"pm25": 22, "lat": \#(north), "lon": \#(longitude)}"#,
                #"{"pm25": 80, "latitude": "\#(north)", "longitude": "\#(east)"}"#,
            ]
            // One at a time, each once the last is taken: the tracker takes a particulate reading in the same
            // millisecond as the one before for a retained replay (`AirQualityMonitor.isNew`).
            for (payload, level) in zip(payloads, ["Good", "Moderate", "Unhealthy"]) {
                try await publish(broker, topic, payload)
                try await hub.waitForLog("sensor event", "sensor=walker", "to=\(level)")
            }
            // hubd writes its history at least every second.
            try await eventually("the three readings in the session") {
                let answer = try await request("GET", "\(base)/api/v1/sessions/\(id)")
                return answer.status == 200 && (try? object(answer.body))?["readings"] as? Int == 3
            }
            let stop = try await request("POST", "\(base)/api/v1/sensors/walker/session", #"{"action":"stop"}"#)
            let stopped = try object(stop.body)
            #expect(stop.status == 200 && stopped["session"] as? String == id, "\(stop.body)")
            let refused = try await request("POST", "\(base)/api/v1/sensors/balcony/session", #"{"action":"start"}"#)
            #expect(refused.status == 409 && refused.body.contains("sessions: in hubd.yaml"), "\(refused.body)")

            try await eventually("the session ended in the history") {
                let answer = try await request("GET", "\(base)/api/v1/sessions/\(id)")
                return (try? object(answer.body))?["open"] as? Bool == false
            }
            let session = try object(try await request("GET", "\(base)/api/v1/sessions/\(id)").body)
            #expect(session["readings"] as? Int == 3 && session["positioned"] as? Int == 3)
            #expect(session["ended"] as? String != nil && session["sensor"] as? String == "walker")
            let distance = try #require(session["distance_m"] as? Double)
            #expect(abs(distance - 200) <= 1, "\(distance)")
            #expect((session["pm25"] as? [String: Double])?["max"] == 80)
            let listed = try await request("GET", "\(base)/api/v1/sessions?sensor=walker")
            let list = try #require(try JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [[String: Any]])
            #expect(list.map { $0["id"] as? String } == [id])

            let gpx = try await request("GET", "\(base)/api/v1/sessions/\(id)/track?format=gpx")
            #expect(gpx.type == "application/gpx+xml")
            let reader = TrackPoints()
            let parser = XMLParser(data: Data(gpx.body.utf8))
            parser.delegate = reader
            #expect(parser.parse() && reader.count == 3)

            let page = try await request("GET", "\(base)/sessions/\(id)")
            #expect(page.status == 200 && page.body.contains(#"class="session-map""#))
            #expect(page.body.components(separatedBy: #"<line class="segment""#).count == 3, "two steps")
            #expect(page.body.contains("stroke=\"\(AQI.category(pm25: 4).hex)\""))
            // The list marks it mobile: the page links its card to its sessions (DashboardBrowserTests).
            let sensorList = try await request("GET", "\(base)/api/v1/sensors")
            #expect(sensorList.body.contains(#""mobile":true"#) && sensorList.body.contains(#""name":"walker""#))
            await hub.stop()
        }
    }

    func request(_ method: String, _ url: String, _ body: String? = nil) async throws -> (
        status: UInt, type: String?, body: String
    ) {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        if let body {
            request.body = .bytes(ByteBuffer(string: body))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let response = try await HTTPClient.shared.execute(authorized(request), timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return (response.status.code, response.headers.first(name: "Content-Type"), String(buffer: buffer))
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }
}

/// Counts a GPX document's `trkpt`s.
private final class TrackPoints: NSObject, XMLParserDelegate {
    var count = 0

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if element == "trkpt" { count += 1 }
    }
}
