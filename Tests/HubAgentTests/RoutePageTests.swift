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

/// `/route` and `shortest=true`: the least-polluted route beside the shortest, on a real history file seeded with
/// the synthetic city (a hotspot on the straight line), with map tiles and without.
@Suite struct RoutePageTests {
    let directory: TemporaryDirectory
    let from = RouteFixtures.text(RouteFixtures.start)
    let to = RouteFixtures.text(RouteFixtures.end)
    static let tiles = MapTiles(checking: "http://tiles.test:8081/osm/{z}/{x}/{y}.png", attribution: "© Tile makers")!

    init() throws {
        directory = try TemporaryDirectory()
    }

    func seed() async throws { try await HubAPIRouteTests.seed(directory.path) }

    func withClient(
        tiles: MapTiles? = nil, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var logger = Logger(label: "route-page-test")
        logger.logLevel = .critical
        let api = HubAPI(
            snapshot: { _ in HubSnapshot() }, store: StateDirectory(option: directory.path).registry,
            stateDirectory: directory.path,
            access: testAccess(directory.path, imageOrigins: tiles.map { [$0.origin] } ?? []),
            metrics: MetricsExporter(), logger: logger, mapTiles: tiles)
        try await Application(router: api.router()).test(.router) { client in
            try await body(AuthorizedClient(base: client, token: testAdminToken))
        }
    }

    @Test func theShortestComesBesideTheRouteWhenAskedFor() async throws {
        try await seed()
        let (from, to) = (from, to)
        try await withClient { client in
            let query = "/api/v1/route?from=\(from)&to=\(to)&weight=0.05&shortest=true"
            try await client.execute(uri: query, method: .get) {
                #expect($0.status == .ok && $0.headers[.contentType] == "application/geo+json; charset=utf-8")
                let collection = try #require(
                    try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any])
                #expect(collection["type"] as? String == "FeatureCollection")
                let features = try #require(collection["features"] as? [[String: Any]])
                #expect(features.count == 2)
                guard features.count == 2 else { return }
                let cleanest = try #require(features[0]["properties"] as? [String: Any])
                let shortest = try #require(features[1]["properties"] as? [String: Any])
                #expect(cleanest["route"] as? String == "least-polluted" && shortest["route"] as? String == "shortest")
                // The shortest's own figures are the ones the route's properties give for it.
                #expect(shortest["length_m"] as? Double == cleanest["shortest_length_m"] as? Double)
                #expect(shortest["exposure"] as? Double == cleanest["shortest_exposure"] as? Double)
                // Across the grid the shortest is the straight line through the hotspot, about 1,600 m.
                #expect(abs((shortest["length_m"] as? Double ?? 0) - 1600) < 50)
                let cleanMean = try #require(cleanest["mean_pm25"] as? Double)
                let shortMean = try #require(shortest["mean_pm25"] as? Double)
                #expect(cleanMean < shortMean / 2, "\(cleanMean) \(shortMean)")
                let line = try #require((features[1]["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
                #expect(line.count > 10 && abs(line[0][1] - RouteFixtures.start.latitude) < 0.0002)
                // The straight line stays on the start's latitude; the cleaner way leaves it.
                #expect(line.allSatisfy { abs($0[1] - RouteFixtures.start.latitude) < 0.0003 })
                let route = try #require((features[0]["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
                #expect(route.contains { abs($0[1] - RouteFixtures.start.latitude) > 0.001 })
            }
            try await client.execute(uri: query + "&format=gpx", method: .get) {
                let text = String(buffer: $0.body)
                #expect(text.components(separatedBy: "<trk>").count == 3 && text.contains("<name>Shortest path</name>"))
            }
            try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)&shortest=yes", method: .get) {
                #expect($0.status == .badRequest && String(buffer: $0.body).contains("shortest is true or false"))
            }
        }
    }

    @Test func theRoutePageDrawsBothWaysWithTheirFigures() async throws {
        try await seed()
        let (from, to) = (from, to)
        try await withClient { client in
            try await client.execute(uri: "/route", method: .get) {
                let html = String(buffer: $0.body)
                #expect($0.status == .ok && html.contains("<form class=\"filters\" method=\"get\" action=\"/route\">"))
                #expect(!html.contains("<svg"))
            }
            try await client.execute(uri: "/route?from=\(from)&to=\(to)&weight=0.05", method: .get) {
                #expect($0.status == .ok)
                let html = String(buffer: $0.body)
                #expect(html.contains(#"<polyline class="cleanest""#) && html.contains(#"<polyline class="shortest""#))
                #expect(html.contains(#"<tr class="cleanest"><td data-label="Way">Least polluted</td>"#))
                #expect(
                    html.contains(#"<tr class="shortest"><td data-label="Way">Shortest</td><td data-label="Length">1."#)
                )
                #expect(html.contains("The least-polluted way: +") && html.contains("% exposure"))
                #expect(html.contains("shortest=true&amp;format=gpx") && html.contains("weight=0.05"))
                // The readings as dots in their AQI colour: the hotspot's 150 µg/m³ is Very Unhealthy (purple).
                #expect(html.contains(##"fill="#8f3f97"/>"##) && html.contains(##"fill="#00e400"/>"##))
                // No tiles configured: nothing from elsewhere, and the page tells other sites nothing.
                #expect(!html.contains("<image") && $0.headers[.init("Referrer-Policy")!] == "same-origin")
                #expect(html.contains(#"value="\#(from)""#))
            }
            for (query, status, message) in [
                ("from=here&to=\(to)", HTTPResponse.Status.badRequest, "from: &#39;here&#39; is not LAT,LON"),
                ("from=\(from)", .badRequest, "to is required"),
                ("from=52.37,4.89&to=52.36,4.91", .notFound, "no PM2.5 readings in the area"),
            ] {
                try await client.execute(uri: "/route?\(query)", method: .get) {
                    let html = String(buffer: $0.body)
                    #expect($0.status == status, "\(query)")
                    #expect(html.contains("<p class=\"error\" role=\"alert\">No route: "), "\(query)")
                    #expect(html.contains(message), "\(query): \(html)")
                }
            }
        }
    }

    /// With tiles, each is placed by its own corners: the start marker sits in the tile holding the start, at the
    /// start's fraction of that tile (Web Mercator), within a pixel.
    @Test func tilesLieUnderTheRouteWhereTheyBelong() async throws {
        try await seed()
        let (from, to) = (from, to)
        try await withClient(tiles: Self.tiles) { client in
            // Where the route starts: the middle of the grid cell holding `from`.
            let first = try await client.execute(uri: "/api/v1/route?from=\(from)&to=\(to)", method: .get) {
                let feature = try #require(
                    try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any])
                let line = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
                return try #require(GeoPoint(latitude: line[0][1], longitude: line[0][0]))
            }
            try await client.execute(uri: "/route?from=\(from)&to=\(to)", method: .get) {
                #expect($0.status == .ok)
                #expect($0.headers[.init("Referrer-Policy")!] == "strict-origin-when-cross-origin")
                let policy = $0.headers[.contentSecurityPolicy] ?? ""
                #expect(policy.contains("img-src 'self' data: http://tiles.test:8081;"), "\(policy)")
                let html = String(buffer: $0.body)
                #expect(html.contains(">© Tile makers</text>"))
                let images = html.matches(
                    of:
                        /<image href="http:\/\/tiles.test:8081\/osm\/(\d+)\/(\d+)\/(\d+).png" x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"/
                ).map {
                    (Int($0.1)!, Int($0.2)!, Int($0.3)!, Double($0.4)!, Double($0.5)!, Double($0.6)!, Double($0.7)!)
                }
                #expect((2...MapFrame.maximumTiles).contains(images.count), "\(images.count) tiles")
                // A 1.6 km route on 640 px: a tile is drawn between 181 and 362 px.
                #expect(images.allSatisfy { (181...362).contains($0.5) }, "\(images.map(\.5))")
                let start = try #require(
                    html.firstMatch(of: /<circle class="start" cx="([-\d.]+)" cy="([-\d.]+)"/).map {
                        (Double($0.1)!, Double($0.2)!)
                    })
                let zoom = try #require(images.first?.0)
                let (tx, ty) = MapTiles.tile(of: first, zoom: zoom)
                let tile = try #require(images.first { $0.1 == Int(tx) && $0.2 == Int(ty) })
                let expected = (tile.3 + (tx - tx.rounded(.down)) * tile.5, tile.4 + (ty - ty.rounded(.down)) * tile.6)
                #expect(abs(start.0 - expected.0) < 1 && abs(start.1 - expected.1) < 1, "\(start) \(expected)")
            }
        }
    }

    @Test func tileArithmetic() throws {
        let point = GeoPoint(latitude: 52.0907, longitude: 5.1214)!
        // Worked out with the slippy-map formulas (x = (λ + 180) / 360 · 2^z, y = (1 − asinh(tan φ) / π) / 2 · 2^z).
        let (x, y) = MapTiles.tile(of: point, zoom: 15)
        #expect(abs(x - 16850.1612) < 0.001 && abs(y - 10810.3419) < 0.001)
        let corner = MapTiles.corner(x: 16850, y: 10796, zoom: 15)
        #expect(abs(corner.latitude - 52.1874047) < 1e-6 && abs(corner.longitude - 5.1196289) < 1e-6)
        #expect(MapTiles.tile(of: GeoPoint(latitude: 0, longitude: -180)!, zoom: 3) == (0, 4))
        // 256 px a tile at zoom z is 156,543 m × cos φ / 2^z a pixel.
        #expect(MapTiles.zoom(pixelsPerMetre: 1 / (156_543.034 / 32_768), latitude: 0) == 15)
        #expect(MapTiles.zoom(pixelsPerMetre: 1e9, latitude: 52) == 19)
        #expect(MapTiles.zoom(pixelsPerMetre: 1e-9, latitude: 52) == 0)
        #expect(Self.tiles.url(zoom: 3, x: 4, y: 5) == "http://tiles.test:8081/osm/3/4/5.png")
        #expect(MapTiles.openStreetMap.origin == "https://tile.openstreetmap.org")
        for bad in [
            "https://tile.example/{z}/{x}.png", "ftp://tile.example/{z}/{x}/{y}.png", "https:///{z}/{x}/{y}.png",
            "https://{s}.tile.example/{z}/{x}/{y}.png", "https://tile.example/{z}/{x}/{y}.png\" onload=\"x",
            "tile.example/{z}/{x}/{y}.png",
        ] {
            #expect(MapTiles(checking: bad, attribution: "") == nil, "\(bad)")
        }
    }
}
