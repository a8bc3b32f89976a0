import Foundation
import HTTPTypes
import HubCore
import HubHistory
import HubSupport
import HubTestKit
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HubAgent

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Issue 21: recording sessions in the API (a list, one with statistics, its track in three formats, start and stop)
/// over a real history seeded with a walk of known geometry, and the dashboard's session page with its map.
extension HubAPITests {
    /// Degrees of latitude in a metre (on the mean Earth radius the statistics use).
    static let degreesPerMetre = 180 / (Double.pi * Geodesy.earthRadius)
    static let walkID = "00000000000a-2"
    static let stillID = "00000000000a-4"

    /// Where the walk went: a start, 100 m north of it, then 100 m east of that; PM2.5 5, 20 and 40.
    static let walk: [(latitude: Double, longitude: Double, pm25: Double, pm10: Double)] = {
        let start = (latitude: 51.5, longitude: -0.12)
        let north = start.latitude + 100 * degreesPerMetre
        let east = start.longitude + 100 * degreesPerMetre / cos(north * .pi / 180)
        return [
            (start.latitude, start.longitude, 5, 10), (north, start.longitude, 20, 30), (north, east, 40, 50),
        ]
    }()

    /// A registry with a mobile particulate sensor (`walker`) and a fixed one (`balcony`); a history with the walk
    /// (three readings 10 s apart, ended), a later session still open whose reading has no position, and a balcony
    /// reading. `walker` may be called something hostile in the history.
    @discardableResult
    func seedSessions(walker: String = "walker") async throws -> Timestamp {
        let registry = """
            {"schemaVersion": 1, "sensors": [\(SensorTrackerDeviceTests.sensor(10, "walker", "walker", #""kind": "particulate""#)),
             \(SensorTrackerDeviceTests.sensor(11, "balcony", "balcony", #""kind": "particulate""#))]}
            """
        try registry.write(toFile: store.path, atomically: true, encoding: .utf8)
        let base = (Timestamp.now.millisecondsSince1970 / 1000 - 3600) * 1000
        func at(_ seconds: Int64) -> Timestamp { Timestamp(millisecondsSince1970: base + seconds * 1000) }
        var readings = Self.walk.enumerated().map { index, point in
            RecordedReading(
                sensor: walker,
                reading: .particulate(
                    ParticulateReading(
                        pm25: point.pm25, pm10: point.pm10, time: at(Int64(index) * 10),
                        position: GeoFix(point: GeoPoint(latitude: point.latitude, longitude: point.longitude)!))),
                sensorID: "00000000000a", session: Self.walkID)
        }
        readings.append(
            RecordedReading(
                sensor: walker, reading: .particulate(ParticulateReading(pm25: 8, pm10: 12, time: at(61))),
                sensorID: "00000000000a", session: Self.stillID))
        readings.append(
            RecordedReading(
                sensor: "balcony", reading: .particulate(ParticulateReading(pm25: 3, pm10: 4, time: at(5))),
                sensorID: "00000000000b"))
        func event(_ id: String, _ session: String, _ from: String, _ to: String, _ time: Timestamp) -> SensorEvent {
            SensorEvent(
                id: id, kind: .session, sensor: walker, topic: "walker", oldStatus: from, newStatus: to, time: time,
                value: session)
        }
        let events = [
            event(Self.walkID, Self.walkID, "idle", "recording", at(0)),
            event("00000000000a-3", Self.walkID, "recording", "idle", at(20)),
            event(Self.stillID, Self.stillID, "idle", "recording", at(60)),
        ]
        let history = try History(directory: directory.path)
        try await history.record(readings: readings, events: events)
        return at(0)
    }

    @Test func sessionsAreListedWithTheirStatistics() async throws {
        let started = try await seedSessions()
        try await withClient { client in
            try await client.execute(uri: "/api/v1/sessions", method: .get) {
                #expect($0.status == .ok)
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["id"] as? String } == [Self.stillID, Self.walkID])
                #expect(list.map { $0["open"] as? Bool } == [true, false])
                #expect(list.map { $0["readings"] as? Int } == [1, 3])
                #expect(list[0]["ended"] is NSNull && list[1]["ended"] as? String != nil)
                #expect(list[1]["started"] as? String == started.iso8601 && list[1]["sensor"] as? String == "walker")
                // The list has no statistics: they take a session's readings.
                #expect(list[1]["distance_m"] == nil)
            }
            try await client.execute(uri: "/api/v1/sessions?sensor=WALKER&limit=1&since=2h", method: .get) {
                let list = try #require(try decode($0.body) as? [[String: Any]])
                #expect(list.map { $0["id"] as? String } == [Self.stillID])
            }
            try await client.execute(uri: "/api/v1/sessions?sensor=balcony", method: .get) {
                let list = try decode($0.body) as? [Any]
                #expect(list?.isEmpty == true)
            }
            try await client.execute(uri: "/api/v1/sessions/\(Self.walkID)", method: .get) {
                #expect($0.status == .ok)
                let session = try #require(try decode($0.body) as? [String: Any])
                #expect(session["id"] as? String == Self.walkID && session["open"] as? Bool == false)
                // 100 m north, then 100 m east: 200 m along the great circle.
                let distance = try #require(session["distance_m"] as? Double)
                #expect(abs(distance - 200) <= 1, "\(distance)")
                #expect(session["duration_s"] as? Double == 20 && session["positioned"] as? Int == 3)
                let pm25 = try #require(session["pm25"] as? [String: Double])
                #expect(pm25 == ["min": 5, "mean": 21.7, "max": 40])
                #expect(session["pm10"] as? [String: Double] == ["min": 10, "mean": 30, "max": 50])
                #expect(session["value"] is NSNull)
                // PM2.5 20 from 10 s to 20 s is above the guideline of 15; 40 is the last reading and stands for
                // no time.
                #expect(session["above_guideline_s"] as? Double == 10 && session["guideline"] as? Double == 15)
            }
            // A fixed sensor's readings are its one open-ended session.
            try await client.execute(uri: "/api/v1/sessions/fixed:balcony", method: .get) {
                let session = try #require(try decode($0.body) as? [String: Any])
                #expect(session["readings"] as? Int == 1 && session["open"] as? Bool == true)
                #expect(session["distance_m"] as? Double == 0 && session["positioned"] as? Int == 0)
            }
        }
    }

    @Test func aTrackIsExportedAsGeoJSONGPXAndCSV() async throws {
        try await seedSessions()
        try await withClient { client in
            let track = "/api/v1/sessions/\(Self.walkID)/track"
            try await client.execute(uri: track, method: .get) {
                #expect($0.status == .ok && $0.headers[.contentType] == "application/geo+json")
                let name = try #require($0.headers[.contentDisposition])
                #expect(name.hasPrefix("attachment; filename=\"walker-") && name.hasSuffix("Z.geojson\""), "\(name)")
                let document = try #require(try decode($0.body) as? [String: Any])
                let features = try #require(document["features"] as? [[String: Any]])
                let geometries = features.compactMap { $0["geometry"] as? [String: Any] }
                #expect(geometries.map { $0["type"] as? String } == ["LineString", "Point", "Point", "Point"])
                // RFC 7946: [longitude, latitude].
                let line = try #require(geometries[0]["coordinates"] as? [[Double]])
                #expect(line.count == 3)
                for (coordinates, point) in zip(line, Self.walk) {
                    #expect(abs(coordinates[0] - point.longitude) < 1e-6 && abs(coordinates[1] - point.latitude) < 1e-6)
                }
                let properties = features.compactMap { $0["properties"] as? [String: Any] }
                #expect(properties[0]["session"] as? String == Self.walkID)
                #expect(properties.dropFirst().map { $0["pm25"] as? Double } == [5, 20, 40])
            }
            try await client.execute(uri: track + "?format=gpx", method: .get) {
                #expect($0.headers[.contentType] == "application/gpx+xml")
                #expect($0.headers[.contentDisposition]?.hasSuffix(".gpx\"") == true)
                let reader = TrackPointReader()
                let parser = XMLParser(data: Data(buffer: $0.body))
                parser.delegate = reader
                #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
                #expect(reader.points.count == 3)
                for (found, point) in zip(reader.points, Self.walk) {
                    #expect(
                        abs(found.latitude - point.latitude) < 1e-6 && abs(found.longitude - point.longitude) < 1e-6)
                }
            }
            try await client.execute(uri: track + "?format=csv", method: .get) {
                #expect($0.headers[.contentType] == "text/csv; charset=utf-8")
                #expect($0.headers[.contentDisposition]?.hasSuffix(".csv\"") == true)
                let rows = String(buffer: $0.body).split(separator: "\n").map {
                    $0.split(separator: ",", omittingEmptySubsequences: false)
                }
                #expect(rows.first?.joined(separator: ",") == "time,lat,lon,alt,accuracy,pm25,pm10,value")
                #expect(rows.count == 4 && rows.dropFirst().allSatisfy { $0.count == 8 })
                #expect(rows.dropFirst().map { Double($0[5]) } == [5, 20, 40])
                #expect(abs((Double(rows[3][1]) ?? 0) - Self.walk[2].latitude) < 1e-6)
                #expect(abs((Double(rows[3][2]) ?? 0) - Self.walk[2].longitude) < 1e-6)
            }
            // The open session's reading has no position: a row, but no point.
            try await client.execute(uri: "/api/v1/sessions/\(Self.stillID)/track?format=csv", method: .get) {
                #expect(String(buffer: $0.body).split(separator: "\n").last?.contains(",,,,,8,12,") == true)
            }
        }
    }

    @Test func unknownSessionsAndBadParametersAreRefused() async throws {
        try await withClient { client in
            // No history yet.
            try await client.execute(uri: "/api/v1/sessions", method: .get) {
                #expect($0.status == .notFound && error($0.body)?.contains("no history yet") == true)
            }
        }
        try await seedSessions()
        try await withClient { client in
            let refused: [(String, HTTPResponse.Status, String)] = [
                ("/api/v1/sessions/nope", .notFound, "no session 'nope'"),
                ("/api/v1/sessions/nope/track", .notFound, "no session 'nope'"),
                ("/api/v1/sessions/fixed:nobody", .notFound, "no session 'fixed:nobody'"),
                ("/api/v1/sessions/\(Self.walkID)/track?format=kml", .badRequest, "format is geojson, gpx or csv"),
                ("/api/v1/sessions?sensor=nobody", .notFound, "no sensor named 'nobody'"),
                ("/api/v1/sessions?limit=0", .badRequest, "limit is a number from 1 to 1000"),
                ("/api/v1/sessions?since=soon", .badRequest, "since is a duration"),
            ]
            for (uri, status, message) in refused {
                try await client.execute(uri: uri, method: .get) {
                    #expect($0.status == status, "\(uri)")
                    #expect(error($0.body)?.contains(message) == true, "\(uri): \(String(buffer: $0.body))")
                }
            }
            try await client.execute(uri: "/sessions/nope", method: .get) {
                #expect($0.status == .notFound && String(buffer: $0.body).contains("<h1>No such session</h1>"))
            }
        }
    }
}

/// The `trkpt`s of a GPX document, read with Foundation's XML parser.
final class TrackPointReader: NSObject, XMLParserDelegate {
    var points: [(latitude: Double, longitude: Double)] = []

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if element == "trkpt", let latitude = attributes["lat"].flatMap(Double.init),
            let longitude = attributes["lon"].flatMap(Double.init)
        {
            points.append((latitude, longitude))
        }
    }
}
