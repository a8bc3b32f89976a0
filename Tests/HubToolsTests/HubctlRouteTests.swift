import Foundation
import HubCore
import HubHistory
import HubTestKit
import Testing

/// `hubctl route` run as a process on a real history file seeded with the synthetic city (`RouteFixtures`): the
/// route goes around the hotspot on the straight line, in text, GeoJSON and GPX, and every refusal has its message
/// and exit status.
@Suite(.timeLimit(.minutes(2)))
struct HubctlRouteTests {
    let hubctl: Hubctl
    let from = RouteFixtures.text(RouteFixtures.start)
    let to = RouteFixtures.text(RouteFixtures.end)

    init() throws {
        hubctl = try Hubctl()
    }

    /// The city's readings as a mobile sensor "bike" took them an hour ago, and a fixed sensor's, which have no
    /// position and must not count.
    func seed(age: Int64 = 3_600_000, sensor: String = "bike") async throws {
        let history = try History(directory: hubctl.state.path)
        let time = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - age)
        var readings = RouteFixtures.hotspot().map { reading in
            RecordedReading(
                sensor: sensor,
                reading: .particulate(
                    ParticulateReading(
                        pm25: reading.pm25, pm10: nil, time: time,
                        position: GeoFix(point: GeoPoint(latitude: reading.latitude, longitude: reading.longitude)!))),
                session: "walk-1")
        }
        readings.append(
            RecordedReading(
                sensor: "balcony", reading: .particulate(ParticulateReading(pm25: 400, pm10: nil, time: time))))
        try await history.record(readings: readings, events: [])
    }

    func point(_ place: (latitude: Double, longitude: Double)) -> GeoPoint {
        GeoPoint(latitude: place.latitude, longitude: place.longitude)!
    }

    /// How far a [lon, lat] position is from the hotspot's centre, in metres.
    func fromCentre(_ position: [Double]) -> Double {
        let centre = RouteFixtures.origin
        let x = (position[0] - centre.longitude) * .pi / 180 * 6_371_008.8 * cos(centre.latitude * .pi / 180)
        let y = (position[1] - centre.latitude) * .pi / 180 * 6_371_008.8
        return (x * x + y * y).squareRoot()
    }

    @Test func theRouteGoesAroundTheHotspot() async throws {
        try await seed()
        let text = try await hubctl.run("route", "--from", from, "--to", to, "--weight", "0.05")
        #expect(text.status == 0, "\(text.standardError)")
        let lines = text.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(text.standardOutput)")
        #expect(lines[0].hasPrefix("Least-polluted route: ") && lines[0].contains(" m, exposure "))
        #expect(lines[1].hasPrefix("Shortest path:        1,6"))
        // "+412 m (+26 %), −91 % exposure": longer, and much cleaner.
        let detour = try #require(lines[2].firstMatch(of: /The detour: +\+(\d+) m \(\+(\d+) %\), −(\d+) % exposure/))
        #expect(Int(detour.1)! > 0 && Int(detour.3)! > 50, "\(lines[2])")
        // The circle of radius 800 + 200 m holds the readings within 1 km of the centre.
        let area = RouteArea(start: point(RouteFixtures.start), end: point(RouteFixtures.end), margin: 200)
        let inCircle = RouteFixtures.hotspot().filter { area.contains(point(($0.latitude, $0.longitude))) }.count
        #expect(inCircle > 1000 && inCircle < 1681)
        let grouped = "\(inCircle / 1000),\(String(inCircle % 1000).leftPadded(3))"
        #expect(lines[3].hasPrefix("Planned across the grid on \(grouped) PM2.5 readings"), "\(lines[3])")
        #expect(lines[3].contains("from the last 30d within 1,000 m of 52.0900° N, 5.1200° E."))
        #expect(lines[4].hasPrefix("Cells with no data count at 15 µg/m³: ") && lines[4].contains("within 250 m."))
        #expect(lines[5].hasPrefix("The track: --format geojson or --format gpx ("))

        let geo = try await hubctl.run("route", "--from", from, "--to", to, "--weight", "0.05", "--format", "geojson")
        #expect(geo.status == 0)
        let feature = try #require(
            try JSONSerialization.jsonObject(with: Data(geo.standardOutput.utf8)) as? [String: Any])
        #expect(feature["type"] as? String == "Feature")
        let geometry = try #require(feature["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        let coordinates = try #require(geometry["coordinates"] as? [[Double]])
        #expect(coordinates.count > 10 && coordinates.allSatisfy { $0.count == 2 })
        // [longitude, latitude]: the first near the start, the last near the end, none through the hotspot.
        #expect(abs(coordinates[0][0] - RouteFixtures.start.longitude) < 0.0004)
        #expect(abs(coordinates[0][1] - RouteFixtures.start.latitude) < 0.0002)
        #expect(abs(coordinates.last![0] - RouteFixtures.end.longitude) < 0.0004)
        #expect(coordinates.allSatisfy { fromCentre($0) > 200 })
        let properties = try #require(feature["properties"] as? [String: Any])
        let length = try #require(properties["length_m"] as? Double)
        let shortest = try #require(properties["shortest_length_m"] as? Double)
        let exposure = try #require(properties["exposure"] as? Double)
        let shortestExposure = try #require(properties["shortest_exposure"] as? Double)
        #expect(length > shortest && abs(shortest - 1600) < 50)
        #expect(exposure < shortestExposure / 2)
        #expect(properties["readings"] as? Int == inCircle)
        #expect(properties["default_pm25"] as? Double == 15 && (properties["defaulted_cells"] as? Int ?? 0) > 0)

        let gpx = try await hubctl.run("route", "--from", from, "--to", to, "--format", "gpx")
        #expect(gpx.status == 0 && gpx.standardOutput.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx "))
        #expect(gpx.standardOutput.contains("<trkpt lat=\"52.09") && gpx.standardOutput.hasSuffix("</gpx>\n"))

        // Along roads: a street every 200 m, the route on them and still around the hotspot.
        let roads = hubctl.state.file("streets.geojson")
        try RouteFixtures.streetGrid().write(toFile: roads, atomically: true, encoding: .utf8)
        let along = try await hubctl.run(
            "route", "--from", from, "--to", to, "--weight", "0.05", "--roads", roads, "--format", "geojson")
        #expect(along.status == 0, "\(along.standardError)")
        let onRoads = try #require(
            try JSONSerialization.jsonObject(with: Data(along.standardOutput.utf8)) as? [String: Any])
        let track = try #require((onRoads["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
        #expect(track.allSatisfy { fromCentre($0) > 150 })
    }

    @Test func noReadingsAreAClearError() async throws {
        // No history at all.
        let missing = try await hubctl.run("route", "--from", from, "--to", to)
        #expect(missing.status == 69 && missing.standardError.contains("no history at"))
        // Readings, but 40 days old: not since 30d, and only a fixed sensor's without a position.
        try await seed(age: 40 * 86_400_000)
        let old = try await hubctl.run("route", "--from", from, "--to", to)
        #expect(old.status == 66, "\(old.standardError)")
        #expect(
            old.standardError
                == "hubctl: no PM2.5 readings in the area between start and end: a least-polluted route needs data; "
                + "widen the time range or the margin\n")
        #expect(old.standardOutput.isEmpty)
        // With --since 60d they count; elsewhere (Amsterdam) there are none.
        #expect(try await hubctl.run("route", "--from", from, "--to", to, "--since", "60d").status == 0)
        let elsewhere = try await hubctl.run("route", "--from", "52.37,4.89", "--to", "52.36,4.91", "--since", "60d")
        #expect(elsewhere.status == 66)
        // Another sensor's readings only.
        let other = try await hubctl.run("route", "--from", from, "--to", to, "--since", "60d", "--sensors", "nobody")
        #expect(other.status == 64 && other.standardError.contains("nobody"))
    }

    @Test func badInputStartEqualToEndAndPointsOffTheRoads() async throws {
        try await seed()
        let same = try await hubctl.run("route", "--from", from, "--to", from)
        #expect(same.status == 64)
        #expect(same.standardError.hasSuffix("are 0.0 m apart, within one 25 m cell: there is no route between them\n"))
        for (arguments, message) in [
            (["--from", "95,5.12"], "the latitude in '95,5.12' must be from -90 to 90"),
            (["--from", "52.09"], "'52.09' is not LAT,LON"),
            (["--from", "north"], "is not LAT,LON"),
            (["--to", "52.1,190"], "the longitude in '52.1,190' must be from -180 to 180"),
            (["--since", "soon"], "--since is a duration"),
            (["--format", "kml"], "kml"),
            (["--cell", "0"], "the cell size must be a number of metres above 0"),
            (["--weight=-1"], "the pollution weight must be a number of at least 0"),
            (["--cell", "0.1"], "is more than the 16000000 allowed"),
        ] {
            var all = ["route", "--from", from, "--to", to]
            all += arguments
            let result = try await hubctl.run(all)
            #expect(result.status == 64 && result.standardError.contains(message), "\(arguments): \(result)")
        }
        // Roads 10 km east: the start is nowhere near them.
        let far = hubctl.state.file("far.geojson")
        try RouteFixtures.streetGrid(east: 10_000).write(toFile: far, atomically: true, encoding: .utf8)
        let outside = try await hubctl.run("route", "--from", from, "--to", to, "--roads", far)
        #expect(outside.status == 64 && outside.standardError.contains("is more than 250 m from any road"))
        // Two streets that do not meet: unreachable.
        let apart = hubctl.state.file("apart.geojson")
        let lines = [(-900.0, -100.0), (100, 900)].map { west, east in
            let (a, b) = (RouteFixtures.place(west, 0), RouteFixtures.place(east, 0))
            return "[[\(a.longitude),\(a.latitude)],[\(b.longitude),\(b.latitude)]]"
        }
        let multiLine = #"{"type":"MultiLineString","coordinates":["# + lines.joined(separator: ",") + "]}"
        try multiLine.write(toFile: apart, atomically: true, encoding: .utf8)
        let unreachable = try await hubctl.run("route", "--from", from, "--to", to, "--roads", apart)
        #expect(unreachable.status == 65 && unreachable.standardError.contains("no path joins"), "\(unreachable)")
        let notRoads = hubctl.state.file("not.geojson")
        try "[1,2]".write(toFile: notRoads, atomically: true, encoding: .utf8)
        #expect(try await hubctl.run("route", "--from", from, "--to", to, "--roads", notRoads).status == 65)
        let absent = try await hubctl.run("route", "--from", from, "--to", to, "--roads", hubctl.state.file("none"))
        #expect(absent.status == 66 && absent.standardError.contains("can't read the road file"))
    }

    @Test func helpHasAnExample() async throws {
        let help = try await hubctl.run("route", "--help")
        #expect(help.status == 0)
        #expect(
            help.standardOutput.contains("hubctl route --from 52.091,5.121 --to 52.086,5.140 --format gpx > walk.gpx"))
        #expect(help.standardOutput.contains("--weight <k>") && help.standardOutput.contains("Exit status"))
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
