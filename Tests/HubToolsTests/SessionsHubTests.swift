import Foundation
import FoundationXML
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// A mobile particulate sensor end to end: positioned readings through a real Mosquitto to the built hubd, sessions
/// started and stopped by `hubctl sessions` (a control message through the broker) and by a gap, and the session
/// read back from the history by `hubctl sessions list/show/export`, each export parsed as its readers would.
@Suite(.timeLimit(.minutes(2)))
struct SessionsHubTests {
    static let configuration = """
        store:
          flush_interval: 100ms
        sessions:
          - sensors: [walker]
            gap: manual
          - sensors: [jogger]
            gap: 2s

        """

    /// Three readings 0.001° of latitude apart (111.2 m each), the middle one above the WHO guideline.
    static let walk = [
        #"{"pm25": 8, "pm10": 12, "lat": 1.3000, "lon": 103.8000, "alt": 15, "accuracy": 5}"#,
        #"{"pm25": 40, "pm10": 55, "lat": "1.3010", "lon": "103.8000"}"#,
        #"{"pm25": 10, "pm10": 14, "latitude": 1.3020, "longitude": 103.8000}"#,
    ]

    func sessions(_ hub: RunningHub, _ arguments: String...) async throws -> ProcessOutput {
        try await hub.hubctl.run(["sessions"] + arguments + ["--config", hub.configFile])
    }

    @Test func aWalkStartedAndStoppedByHubctlIsListedShownAndExported() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.configuration)
            try await hub.prepare(broker)
            for name in ["walker", "balcony"] {
                #expect(try await hub.hubctl.run("sensors", "add", name, "--kind", "particulate").status == 0)
            }
            try await hub.startAndWaitUntilReady()
            // A fixed sensor can't record; an unknown one is unknown.
            let fixed = try await sessions(hub, "start", "balcony")
            #expect(fixed.status == 64 && fixed.standardError.contains("not a mobile sensor: name it in sessions:"))
            #expect(try await sessions(hub, "start", "nobody").status == 64)

            let started = try await sessions(hub, "start", "walker")
            #expect(started.status == 0, "\(started.standardError)")
            try await hub.waitForLog("sensor event", "sensor=walker", "event=session", "to=recording")
            try await eventually("hubctl sensors show says it records") {
                try await hub.hubctl.run("sensors", "show", "walker").standardOutput.contains("Recording:")
            }
            for payload in Self.walk { try await publish(broker, "walker", payload) }
            try await eventually("the walker's third reading") {
                try hub.sensor("walker")?.attributes["pm25"] == .number(10)
            }
            #expect(try await sessions(hub, "stop", "walker").status == 0)
            try await hub.waitForLog("sensor event", "sensor=walker", "event=session", "to=idle")

            var id = ""
            try await eventually("the session is listed, ended, with its three readings") {
                let list = try await sessions(hub, "list", "walker")
                guard let row = list.standardOutput.split(separator: "\n").dropFirst().first else { return false }
                id = String(row.split(separator: " ")[0])
                return list.standardOutput.hasPrefix("ID ") && row.hasSuffix(" 3") && !row.contains("recording")
            }
            let show = try await sessions(hub, "show", id)
            #expect(show.status == 0)
            #expect(show.standardOutput.contains("Readings:") && show.standardOutput.contains("3 (3 with a position)"))
            // 2 × 111.2 m along a meridian.
            #expect(show.standardOutput.contains("Distance:") && show.standardOutput.contains("222 m"))
            #expect(show.standardOutput.contains("min 8.0, mean 19.3, max 40.0 µg/m³"))

            let geoJSON = try await sessions(hub, "export", id, "--geojson")
            let collection = try #require(
                try JSONSerialization.jsonObject(with: Data(geoJSON.standardOutput.utf8)) as? [String: Any])
            let features = try #require(collection["features"] as? [[String: Any]])
            let line = try #require(features.first?["geometry"] as? [String: Any])
            #expect(line["type"] as? String == "LineString")
            let coordinates = try #require(line["coordinates"] as? [[Double]])
            // [longitude, latitude], the first with its altitude.
            #expect(coordinates.count == 3 && coordinates[0] == [103.8, 1.3, 15] && coordinates[2] == [103.8, 1.302])
            #expect(features.count == 4)

            let gpx = try await sessions(hub, "export", id, "--gpx")
            let points = GPXPoints()
            let parser = XMLParser(data: Data(gpx.standardOutput.utf8))
            parser.delegate = points
            #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
            #expect(points.points.map(\.latitude) == [1.3, 1.301, 1.302])
            #expect(points.elements.contains("time") && points.elements.contains("sensorhub:pm25"))

            let csv = try await sessions(hub, "export", id, "--csv")
            let rows = csv.standardOutput.split(separator: "\n")
            #expect(rows.first == "time,lat,lon,alt,accuracy,pm25,pm10,value" && rows.count == 4)
            #expect(rows[1].hasSuffix(",1.3000000,103.8000000,15,5,8,12,"))

            let missing = try await sessions(hub, "show", "nothing-1")
            #expect(missing.status == 64 && missing.standardError.contains("no session 'nothing-1'"))
            // The fixed sensor's readings are its one open-ended session.
            try await publish(broker, "balcony", #"{"pm25": 4, "pm10": 6}"#)
            try await eventually("the balcony's open-ended session") {
                try await sessions(hub, "list", "balcony").standardOutput.contains("fixed:balcony")
            }
            await hub.stop()
        }
    }

    @Test func aGapEndsAJogAndTheNextReadingStartsAnother() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.configuration)
            try await hub.prepare(broker)
            #expect(try await hub.hubctl.run("sensors", "add", "jogger", "--kind", "particulate").status == 0)
            try await hub.startAndWaitUntilReady()
            try await publish(broker, "jogger", Self.walk[0])
            try await hub.waitForLog("sensor event", "sensor=jogger", "event=session", "to=recording")
            // Nothing for longer than the 2 s gap: the session ends without another reading.
            try await hub.waitForLog("sensor event", "sensor=jogger", "event=session", "to=idle")
            try await publish(broker, "jogger", Self.walk[1])
            try await eventually("two sessions, the first ended") {
                let rows = try await sessions(hub, "list", "jogger").standardOutput.split(separator: "\n").dropFirst()
                // Newest first. The second may have ended too by the time the history has it: its records reach the
                // history after the journal's `fsync`, up to `sync_delay` (10 s) later, and its gap is 2 s.
                return rows.count == 2 && rows.last?.contains("recording") == false
            }
            await hub.stop()
        }
    }
}

/// The track points and element names of a GPX document, as an XML reader sees them.
final class GPXPoints: NSObject, XMLParserDelegate, @unchecked Sendable {
    var points: [GeoPoint] = []
    var elements: Set<String> = []

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.insert(name)
        if name == "trkpt", let lat = attributes["lat"].flatMap(Double.init),
            let lon = attributes["lon"].flatMap(Double.init),
            let point = GeoPoint(latitude: lat, longitude: lon)
        {
            points.append(point)
        }
    }
}
