import Foundation
import HTTPTypes
import HubCore
import HubHistory
import HubSupport
import HubTestKit
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import HubAgent

/// `GET /api/v1/route` through Hummingbird's router on a real history file seeded with the synthetic city.
@Suite struct HubAPIRouteTests {
    let directory: TemporaryDirectory
    let from = RouteFixtures.text(RouteFixtures.start)
    let to = RouteFixtures.text(RouteFixtures.end)

    init() throws {
        directory = try TemporaryDirectory()
    }

    func seed() async throws { try await Self.seed(directory.path) }

    /// The synthetic city's readings, taken by a bike ten minutes ago, in the history at `directory`.
    static func seed(_ directory: String) async throws {
        let history = try History(directory: directory)
        let time = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 600_000)
        try await history.record(
            readings: RouteFixtures.hotspot().map {
                let fix = GeoFix(point: GeoPoint(latitude: $0.latitude, longitude: $0.longitude)!)
                return RecordedReading(
                    sensor: "bike",
                    reading: .particulate(ParticulateReading(pm25: $0.pm25, pm10: nil, time: time, position: fix)))
            }, events: [])
    }

    func withClient(
        roads: RoadNetwork? = nil, routes: Int = 2,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var logger = Logger(label: "api-route-test")
        logger.logLevel = .critical
        let api = HubAPI(
            snapshot: { _ in HubSnapshot() }, store: StateDirectory(option: directory.path).registry,
            stateDirectory: directory.path, access: testAccess(directory.path), metrics: MetricsExporter(),
            logger: logger, roads: roads, maximumRoutesPlanning: routes)
        try await Application(router: api.router()).test(.router) { client in
            try await body(AuthorizedClient(base: client, token: testAdminToken))
        }
    }

    func object(_ buffer: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any])
    }

    @Test func theRouteAsGeoJSONAndGPX() async throws {
        try await seed()
        let (from, to) = (from, to)
        try await withClient { client in
            try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)&weight=0.05", method: .get) {
                #expect($0.status == .ok)
                #expect($0.headers[.contentType] == "application/geo+json; charset=utf-8")
                let feature = try object($0.body)
                #expect(feature["type"] as? String == "Feature")
                let geometry = try #require(feature["geometry"] as? [String: Any])
                let coordinates = try #require(geometry["coordinates"] as? [[Double]])
                #expect(geometry["type"] as? String == "LineString" && coordinates.count > 10)
                // [longitude, latitude].
                #expect(abs(coordinates[0][0] - RouteFixtures.start.longitude) < 0.0004)
                #expect(abs(coordinates[0][1] - RouteFixtures.start.latitude) < 0.0002)
                let properties = try #require(feature["properties"] as? [String: Any])
                let length = try #require(properties["length_m"] as? Double)
                let shortest = try #require(properties["shortest_length_m"] as? Double)
                #expect(length > shortest)
                #expect(
                    try #require(properties["exposure"] as? Double)
                        < (try #require(properties["shortest_exposure"] as? Double)) / 2)
                #expect((properties["readings"] as? Int ?? 0) > 1000 && properties["default_pm25"] as? Double == 15)
                #expect(properties["defaulted_cells"] is Int)
            }
            try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)&format=gpx&since=1d", method: .get) {
                #expect($0.status == .ok && $0.headers[.contentType] == "application/gpx+xml; charset=utf-8")
                let text = String(buffer: $0.body)
                #expect(text.hasPrefix("<?xml") && text.contains("<trkpt lat=\"52.09"))
            }
        }
    }

    @Test func badParametersAre400WithTheReason() async throws {
        try await seed()
        let (from, to) = (from, to)
        try await withClient { client in
            let bad: [(String, HTTPResponse.Status, String)] = [
                ("to=\(to)", .badRequest, "from is required"),
                ("from=\(from)", .badRequest, "to is required"),
                ("from=95,5&to=\(to)", .badRequest, "from: the latitude in '95,5' must be from -90 to 90"),
                ("from=here&to=\(to)", .badRequest, "from: 'here' is not LAT,LON"),
                ("from=\(from)&to=\(to)&cell=x", .badRequest, "cell is a number of metres, not 'x'"),
                ("from=\(from)&to=\(to)&weight=-1", .badRequest, "the pollution weight must be a number of at least 0"),
                ("from=\(from)&to=\(to)&since=soon", .badRequest, "since is a duration"),
                ("from=\(from)&to=\(to)&format=kml", .badRequest, "format is geojson or gpx"),
                // A 2 km box of 1 m cells: 4 M cells, more than a request may build.
                ("from=\(from)&to=\(to)&cell=1", .badRequest, "is more than the 1000000 allowed"),
                ("from=\(from)&to=\(to)&radius=5000", .badRequest, "radius is at most 1000 m"),
                ("from=\(from)&to=\(from)", .badRequest, "there is no route between them"),
                ("from=\(from)&to=\(to)&sensors=nobody", .notFound, "no sensor named 'nobody'"),
                ("from=52.37,4.89&to=52.36,4.91", .notFound, "no PM2.5 readings in the area"),
            ]
            for (query, status, message) in bad {
                try await client.execute(uri: "/api/v1/route?\(query)", method: .get) {
                    #expect($0.status == status, "\(query)")
                    let error = try object($0.body)["error"] as? String ?? ""
                    #expect(error.contains(message), "\(query): \(error)")
                }
            }
        }
    }

    @Test func alongTheConfiguredRoads() async throws {
        try await seed()
        let roads = try RoadNetwork(geoJSON: Data(RouteFixtures.streetGrid().utf8))
        let (from, to) = (from, to)
        try await withClient(roads: roads) { client in
            try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)&weight=0.05", method: .get) {
                #expect($0.status == .ok)
                let properties = try #require(try object($0.body)["properties"] as? [String: Any])
                // On the streets the shortest path is the straight street through the hotspot: 1,600 m.
                #expect(abs((properties["shortest_length_m"] as? Double ?? 0) - 1600) < 5)
                #expect((properties["length_m"] as? Double ?? 0) > 1600)
            }
            try await client.execute(uri: "/api/v1/route?from=52.2,5.12&to=52.21,5.12", method: .get) {
                #expect($0.status == .notFound || $0.status == .badRequest)
            }
        }
    }

    /// Past the routes planned at once, a 503 that says so; the slot comes back when a route is done.
    @Test func tooManyRoutesAtOnceAre503() async throws {
        try await seed()
        let (from, to) = (from, to)
        try await withClient(routes: 0) { client in
            try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)", method: .get) {
                #expect($0.status == .serviceUnavailable)
                let error = try object($0.body)["error"] as? String
                #expect(error == "0 routes are being planned already: try again in a moment")
            }
        }
        try await withClient(routes: 1) { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)", method: .get) {
                    #expect($0.status == .ok)
                }
            }
        }
    }

    /// `route.roads` as hubd reads it at start: a network, or `nil` (logged) for a file that is missing or not roads.
    @Test func theConfiguredRoadFileIsReadOnce() throws {
        let logger = Logger(label: "roads-test")
        let file = directory.file("streets.geojson")
        try RouteFixtures.streetGrid().write(toFile: file, atomically: true, encoding: .utf8)
        #expect(HubdCommand.roads(from: file, logger: logger)?.nodes.count == 11 * 11)
        #expect(HubdCommand.roads(from: directory.file("absent.geojson"), logger: logger) == nil)
        try "{}".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(HubdCommand.roads(from: file, logger: logger) == nil)
    }
}
