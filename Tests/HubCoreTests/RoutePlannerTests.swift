import Foundation
import HubCore
import HubTestKit
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A square city 2 km wide around Utrecht, measured in metres east and north of its centre.
private let city = LocalProjection(origin: GeoPoint(latitude: 52.09, longitude: 5.12)!)

private func at(_ x: Double, _ y: Double) -> GeoPoint { city.unproject(x: x, y: y)! }

/// Readings every 50 m at 5 µg/m³, and 150 µg/m³ within 200 m of the centre: a hotspot on the straight line.
private func hotspotReadings() -> [PollutionReading] {
    var readings: [PollutionReading] = []
    for i in -20...20 {
        for j in -20...20 {
            let (x, y) = (Double(i) * 50, Double(j) * 50)
            let hot = (x * x + y * y).squareRoot() <= 200
            readings.append(PollutionReading(point: at(x, y), pm25: hot ? 150 : 5))
        }
    }
    return readings
}

private func distanceFromCentre(_ point: GeoPoint) -> Double {
    let (x, y) = city.project(point)
    return (x * x + y * y).squareRoot()
}

@Suite struct GeodesyTests {
    @Test func haversineMatchesKnownDistances() {
        // One degree of latitude on the mean sphere: R π / 180.
        let degree = Geodesy.distance(GeoPoint(latitude: 0, longitude: 0)!, GeoPoint(latitude: 1, longitude: 0)!)
        #expect(abs(degree - 111_195.08) < 0.01)
        // A degree of longitude shrinks with cos(latitude).
        let east = Geodesy.distance(GeoPoint(latitude: 60, longitude: 0)!, GeoPoint(latitude: 60, longitude: 1)!)
        #expect(abs(east - 55_597.54) < 1)
        let here = GeoPoint(latitude: 52.09, longitude: 5.12)!
        #expect(Geodesy.distance(here, here) == 0)
    }

    @Test func projectionAgreesWithHaversineNearby() {
        let a = at(-3000, 1200)
        let b = at(2500, -1800)
        let (ax, ay) = city.project(a)
        let (bx, by) = city.project(b)
        let flat = ((ax - bx) * (ax - bx) + (ay - by) * (ay - by)).squareRoot()
        let round = Geodesy.distance(a, b)
        #expect(abs(flat - round) / round < 0.001)
        #expect(abs(ax + 3000) < 1e-6 && abs(ay - 1200) < 1e-6)
    }

    @Test func seedCircleSelectsTheReadingsBetweenStartAndEnd() {
        let area = RouteArea(start: at(-1000, 0), end: at(1000, 0))
        #expect(abs(area.radius - 1000) < 1)
        #expect(area.contains(at(-1000, 0)) && area.contains(at(1000, 0)) && area.contains(at(0, 990)))
        #expect(!area.contains(at(0, 1010)))
        let wider = RouteArea(start: at(-1000, 0), end: at(1000, 0), margin: 100)
        #expect(wider.contains(at(0, 1050)))
        let readings = [at(0, 0), at(0, 1500), at(700, 700)].map { PollutionReading(point: $0, pm25: 10) }
        #expect(area.select(readings).map(\.point) == [at(0, 0), at(700, 700)])
    }
}

@Suite struct PollutionFieldTests {
    @Test func inverseDistanceWeightingAndDefaultedCells() throws {
        let readings = [PollutionReading(point: at(-100, 0), pm25: 10), PollutionReading(point: at(100, 0), pm25: 30)]
        let box = GeoBoundingBox(around: [at(-500, -500), at(500, 500)])!
        let field = try PollutionField(readings: readings, box: box, cellSize: 100, searchRadius: 160, defaultValue: 15)
        #expect(field.rows == 10 && field.columns == 10)
        let west = try #require(field.cell(containing: at(-120, 20)))
        let middle = try #require(field.cell(containing: at(-20, 20)))
        // Centres at (−150, 50) and (−50, 50): the first nearer the 10 than the 30, the second nearer the 30's side.
        let w = field.value(row: west.row, column: west.column)
        let d1 = 50.0 * 50 + 50 * 50
        let d2 = 250.0 * 250 + 50 * 50
        #expect(abs(w - 10) < 1e-9, "the 30 is \(d2.squareRoot()) m away, beyond the radius (d1 \(d1))")
        let m = field.value(row: middle.row, column: middle.column)
        let (a, b) = (1 / (50.0 * 50 + 50 * 50), 1 / (150.0 * 150 + 50 * 50))
        #expect(abs(m - (10 * a + 30 * b) / (a + b)) < 1e-9)
        let corner = try #require(field.cell(containing: at(450, 450)))
        #expect(field.isDefaulted(row: corner.row, column: corner.column))
        #expect(field.value(row: corner.row, column: corner.column) == 15)
        let counted = (0..<field.rows).flatMap { r in (0..<field.columns).map { (r, $0) } }
            .filter { field.isDefaulted(row: $0.0, column: $0.1) }.count
        #expect(field.defaultedCells == counted && counted > 0 && counted < field.cellCount)
        #expect(field.minimumValue == 10)
        #expect(field.cell(containing: at(0, 900)) == nil)
    }

    @Test func badSettingsAreRefused() {
        let box = GeoBoundingBox(around: [at(-500, -500), at(500, 500)])!
        for (cell, radius) in [(0.0, 100.0), (10, -1), (.nan, 100), (0.01, 100)] {
            #expect(throws: RouteError.self) {
                try PollutionField(readings: [], box: box, cellSize: cell, searchRadius: radius)
            }
        }
    }
}

@Suite struct RoutePlannerTests {
    private let start = at(-800, 0)
    private let end = at(800, 0)

    private func field(_ readings: [PollutionReading]) throws -> PollutionField {
        let area = RouteArea(start: start, end: end, margin: 600)
        return try PollutionField(
            readings: area.select(readings), box: area.boundingBox, cellSize: 25, searchRadius: 120)
    }

    @Test func theRouteGoesAroundAHotspotOnTheStraightLine() throws {
        let route = try RoutePlanner(pollutionWeight: 0.05).route(from: start, to: end, over: field(hotspotReadings()))
        let closest = route.points.map(distanceFromCentre).min() ?? 0
        #expect(closest > 200, "the route comes within \(closest) m of the hotspot's centre")
        #expect(route.length > route.shortestLength)
        #expect(route.exposure < route.shortestExposure / 2)
        // The straight path goes through the 150 µg/m³ for 400 m at least.
        #expect(route.shortestExposure > 400 * 150)
        #expect(abs(route.shortestLength - 1600) < 50)
        // The readings cover ±1 km; the circle's box reaches ±1.4 km, and its corners have no data.
        let field = try field(hotspotReadings())
        #expect(route.defaultedCells == field.defaultedCells && route.defaultedCells > 0)
        #expect(Geodesy.distance(route.points.first!, start) < 20 && Geodesy.distance(route.points.last!, end) < 20)
    }

    @Test func withoutAPollutionWeightTheRouteIsTheShortest() throws {
        let route = try RoutePlanner(pollutionWeight: 0).route(from: start, to: end, over: field(hotspotReadings()))
        #expect(route.length == route.shortestLength && route.exposure == route.shortestExposure)
    }

    @Test func alongRoadsTheRouteAvoidsTheHotspotToo() throws {
        let roads = try RoadNetwork(geoJSON: Data(streetGrid(spacing: 200, extent: 1000).utf8))
        #expect(roads.nodes.count == 11 * 11)
        let route = try RoutePlanner(pollutionWeight: 0.05).route(
            from: at(-810, 5), to: at(790, -5), along: roads, field: field(hotspotReadings()))
        #expect(route.points.allSatisfy { distanceFromCentre($0) > 150 })
        #expect(route.length > route.shortestLength && route.exposure < route.shortestExposure)
        #expect(abs(route.shortestLength - 1600) < 5)
    }

    @Test func noReadingsIsRefused() throws {
        let empty = try field([])
        #expect(empty.defaultedCells == empty.cellCount)
        #expect(empty.readingCount == 0)
        let error = try #require(throws: RouteError.self) {
            try RoutePlanner().route(from: start, to: end, over: empty)
        }
        #expect(error.code == .noReadings)
        #expect(error.description.contains("no PM2.5 readings"))
    }

    @Test func startEqualToEndIsARouteOfLengthZero() throws {
        let route = try RoutePlanner().route(from: start, to: start, over: field(hotspotReadings()))
        #expect(route.points.count == 1 && route.length == 0 && route.exposure == 0 && route.shortestLength == 0)
        let roads = try RoadNetwork(geoJSON: Data(streetGrid(spacing: 200, extent: 1000).utf8))
        let onRoads = try RoutePlanner().route(from: start, to: start, along: roads, field: field(hotspotReadings()))
        #expect(onRoads.points.count == 1 && onRoads.length == 0)
        let json = try #require(JSONSerialization.jsonObject(with: Data(route.geoJSON().utf8)) as? [String: Any])
        let geometry = try #require(json["geometry"] as? [String: Any])
        #expect((geometry["coordinates"] as? [Any])?.count == 2)
    }

    @Test func pointsOutsideTheGridOrTheRoadsAreNamed() throws {
        let field = try field(hotspotReadings())
        let far = at(5000, 0)
        let error = try #require(throws: RouteError.self) { try RoutePlanner().route(from: far, to: end, over: field) }
        #expect(error.code == .outsideArea && error.description.contains("start"))
        let other = try #require(throws: RouteError.self) {
            try RoutePlanner().route(from: start, to: far, over: field)
        }
        #expect(other.code == .outsideArea && other.description.contains("end"))
        let roads = try RoadNetwork(geoJSON: Data(streetGrid(spacing: 200, extent: 1000).utf8))
        let offRoad = try #require(throws: RouteError.self) {
            try RoutePlanner(snapDistance: 100).route(from: start, to: at(0, 1300), along: roads, field: field)
        }
        #expect(offRoad.code == .outsideArea)
    }

    @Test func aDisconnectedRoadNetworkIsUnreachable() throws {
        let west = line([at(-800, 0), at(-400, 0), at(-100, 0)])
        let east = line([at(100, 0), at(400, 0), at(800, 0)])
        let roads = try RoadNetwork(geoJSON: Data(collection([west, east]).utf8))
        #expect(roads.nodes.count == 6 && roads.edgeCount == 4)
        let error = try #require(throws: RouteError.self) {
            try RoutePlanner().route(from: start, to: end, along: roads, field: field(hotspotReadings()))
        }
        #expect(error.code == .unreachable)
    }

    @Test func roadFilesThatAreNotLineStringsAreRefused() {
        for text in [
            "[1,2]", "{\"type\":\"FeatureCollection\",\"features\":[]}", "not json",
            "{\"type\":\"LineString\",\"coordinates\":[[5.1,\"x\"],[5.2,52]]}",
            "{\"type\":\"LineString\",\"coordinates\":[[5.1,95],[5.2,52]]}",
        ] {
            let error = #expect(throws: RouteError.self) { try RoadNetwork(geoJSON: Data(text.utf8)) }
            #expect(error?.code == .invalidRoads, "\(text)")
        }
    }

    @Test func geoJSONParsesBackWithItsProperties() throws {
        let route = try RoutePlanner(pollutionWeight: 0.05).route(from: start, to: end, over: field(hotspotReadings()))
        let text = route.geoJSON(name: "to \"work\"\n\u{202E}")
        let json = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["type"] as? String == "Feature")
        let geometry = try #require(json["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        let coordinates = try #require(geometry["coordinates"] as? [[Double]])
        #expect(coordinates.count == route.points.count)
        #expect(abs(coordinates[0][0] - route.points[0].longitude) < 1e-7)
        #expect(abs(coordinates[0][1] - route.points[0].latitude) < 1e-7)
        let properties = try #require(json["properties"] as? [String: Any])
        #expect(abs((properties["length_m"] as? Double ?? 0) - route.length) < 0.01)
        #expect(abs((properties["shortest_exposure"] as? Double ?? 0) - route.shortestExposure) < 0.01)
        #expect(properties["defaulted_cells"] as? Int == route.defaultedCells)
        #expect((properties["name"] as? String)?.hasPrefix("to \"work\"\n") == true)
    }

    @Test func gpxIsWellFormed() throws {
        let route = try RoutePlanner(pollutionWeight: 0.05).route(from: start, to: end, over: field(hotspotReadings()))
        let text = route.gpx(name: "<home> & \"work\" \u{1}", creator: "hub's")
        #expect(text.contains("&lt;home&gt; &amp; &quot;work&quot;"))
        let reader = GPXReader()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = reader
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(reader.points == route.points.count)
        #expect(reader.elements.prefix(4) == ["gpx", "trk", "name", "desc"])
        #expect(reader.name.hasPrefix("<home> & \"work\""))
    }
}

@Suite struct AStarPropertyTests {
    /// A graph of random points within about a kilometre, with random edges no shorter than the straight line.
    private struct RandomGraph: RouteGraph {
        var points: [GeoPoint]
        var edges: [[RouteEdge]]
        var nodeCount: Int { points.count }
        var minimumPM25: Double { edges.joined().map(\.pm25).min() ?? 0 }
        func forEachEdge(from node: Int, _ body: (RouteEdge) -> Void) { edges[node].forEach(body) }
        func straightLine(from: Int, to: Int) -> Double { Geodesy.distance(points[from], points[to]) }

        init(_ random: inout SplitMix64) {
            let count = Int.random(in: 2...60, using: &random)
            points = (0..<count).map { _ in
                at(Double.random(in: -1000...1000, using: &random), Double.random(in: -1000...1000, using: &random))
            }
            edges = Array(repeating: [], count: count)
            for _ in 0..<Int.random(in: 0...(3 * count), using: &random) {
                let a = Int.random(in: 0..<count, using: &random)
                let b = Int.random(in: 0..<count, using: &random)
                guard a != b else { continue }
                let length = Geodesy.distance(points[a], points[b]) * Double.random(in: 1...1.5, using: &random)
                let pm25 = Double.random(in: 2...200, using: &random)
                edges[a].append(RouteEdge(target: b, length: length, pm25: pm25))
                edges[b].append(RouteEdge(target: a, length: length, pm25: pm25))
            }
        }
    }

    @Test func aStarCostEqualsDijkstrasOnRandomGraphs() {
        var reachable = 0
        for seed in UInt64(1)...150 {
            var random = SplitMix64(seed: seed)
            let graph = RandomGraph(&random)
            let start = Int.random(in: 0..<graph.nodeCount, using: &random)
            let goal = Int.random(in: 0..<graph.nodeCount, using: &random)
            let k = [0, 0.01, 0.05, 1][Int.random(in: 0...3, using: &random)]
            // The plain Dijkstra beside A* in HubCore, the one the route benchmark checks A* against too.
            let reference = RouteSearch.dijkstra(graph, from: start, to: goal, k: k)
            let expected = reference?.cost ?? .infinity
            let found = RouteSearch.aStar(graph, from: start, to: goal, k: k)
            guard let found else {
                #expect(expected == .infinity, "seed \(seed): A* found nothing, Dijkstra \(expected)")
                continue
            }
            reachable += 1
            #expect(abs(found.cost - expected) <= 1e-9 * max(1, expected), "seed \(seed)")
            #expect(found.nodes.first == start && found.nodes.last == goal, "seed \(seed)")
            // The path's own edges add up to what it reports.
            var cost = 0.0
            var length = 0.0
            for (a, b) in zip(found.nodes, found.nodes.dropFirst()) {
                let edge = graph.edges[a].filter { $0.target == b }
                    .min { $0.length * (1 + k * $0.pm25) < $1.length * (1 + k * $1.pm25) }!
                cost += edge.length * (1 + k * edge.pm25)
                length += edge.length
            }
            #expect(abs(cost - found.cost) <= 1e-9 * max(1, cost) && abs(length - found.length) <= 1e-6, "seed \(seed)")
        }
        #expect(reachable > 50)
    }

    /// The grid with its octile heuristic: A* still finds Dijkstra's cost, and at k = 0 the heuristic is the exact
    /// length of the shortest path of eight-neighbour steps (a lower bound that is as tight as it can be).
    @Test func aStarCostEqualsDijkstrasOnPollutionGrids() throws {
        let box = GeoBoundingBox(around: [at(-600, -600), at(600, 600)])!
        for seed in UInt64(1)...20 {
            var random = SplitMix64(seed: seed)
            let readings = (0..<Int.random(in: 1...40, using: &random)).map { _ in
                PollutionReading(
                    point: at(
                        Double.random(in: -600...600, using: &random), Double.random(in: -600...600, using: &random)),
                    pm25: Double.random(in: 0...300, using: &random))
            }
            let cellSize = Double.random(in: 30...80, using: &random)
            let grid = GridGraph(field: try PollutionField(readings: readings, box: box, cellSize: cellSize))
            for _ in 0..<5 {
                let start = Int.random(in: 0..<grid.nodeCount, using: &random)
                let goal = Int.random(in: 0..<grid.nodeCount, using: &random)
                let k = [0, 0.02, 0.1, 1][Int.random(in: 0...3, using: &random)]
                let found = try #require(RouteSearch.aStar(grid, from: start, to: goal, k: k))
                let expected = try #require(RouteSearch.dijkstra(grid, from: start, to: goal, k: k))
                #expect(abs(found.cost - expected.cost) <= 1e-9 * max(1, expected.cost), "seed \(seed), k \(k)")
                #expect(found.nodes.first == start && found.nodes.last == goal, "seed \(seed)")
                if k == 0 {
                    #expect(abs(found.length - grid.straightLine(from: start, to: goal)) <= 1e-6, "seed \(seed)")
                }
            }
        }
    }
}

private final class GPXReader: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var points = 0
    var name = ""
    private var inName = false

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.append(element)
        inName = element == "name"
        if element == "trkpt", attributes["lat"].flatMap(Double.init) != nil,
            attributes["lon"].flatMap(Double.init) != nil
        {
            points += 1
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { if inName { name += string } }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        inName = false
    }
}

private func line(_ points: [GeoPoint]) -> String {
    let positions = points.map { "[\($0.longitude),\($0.latitude)]" }.joined(separator: ",")
    return
        "{\"type\":\"Feature\",\"properties\":{},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[\(positions)]}}"
}

private func collection(_ features: [String]) -> String {
    "{\"type\":\"FeatureCollection\",\"features\":[\(features.joined(separator: ","))]}"
}

/// Streets every `spacing` metres east–west and north–south, from −extent to extent: each street one LineString
/// through every crossing, so the crossings are shared coordinates.
private func streetGrid(spacing: Double, extent: Double) -> String {
    let steps = Array(stride(from: -extent, through: extent, by: spacing))
    var features: [String] = []
    for fixed in steps {
        features.append(line(steps.map { at($0, fixed) }))
        features.append(line(steps.map { at(fixed, $0) }))
    }
    return collection(features)
}
