import Foundation
import HubCore
import HubHistory
import HubTestKit
import Testing

extension InChromium {
    /// The maps in headless Chromium, from a running hubd fed over a real broker: a walk's session page draws its
    /// track over the configured map tiles (a local tile server shaped like OpenStreetMap's, `/{z}/{x}/{y}.png`),
    /// which the browser fetches itself with the hub's origin, and only its origin, as Referer; the session's link
    /// leads to the least-polluted way between its ends, beside the shortest with both their figures; and with the
    /// tile server gone both maps are still drawn in full. Each page at a desk's and a phone's size: no sideways
    /// scrolling, every control named, every text readable (`DashboardLookTests.check`); `HUB_SCREENSHOTS` saves them.
    @Suite struct MapBrowserTests {
        /// A tile as the stand-in server draws it: a light ground with a grid and its own z/x/y (SVG, which a browser
        /// draws in an `<image>` as it does a PNG).
        static func tile(_ path: String) -> String {
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><rect width="256" height="256" \
            fill="#eef3e8"/><path d="M0 .5H256M.5 0V256M0 128H256M128 0V256" stroke="#cfd8c4"/>\
            <text x="8" y="20" font-size="11" fill="#8a9a7e" font-family="sans-serif">\(path)</text></svg>
            """
        }

        /// A walk from 800 m west to 800 m east across the synthetic city's hotspot, a reading every 25 m.
        static func walk() -> [(latitude: Double, longitude: Double, pm25: Double)] {
            (0...64).map { step in
                let x = -800 + Double(step) * 25
                let y = 60 * sin(Double(step) / 64 * .pi)
                let place = RouteFixtures.place(x, y)
                let near = exp(-(x * x + y * y) / (150 * 150))
                return (place.latitude, place.longitude, (5 + 140 * near).rounded())
            }
        }

        @Test func aWalksMapLeadsToTheCleanestWayAndBothDrawWithoutTiles() async throws {
            try await withBroker { broker in
                let tiles = try await TestHTTPServer.start { request, _ in
                    .init(
                        status: 200, headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "no-store")],
                        body: Self.tile(request.path))
                }
                defer { Task { await tiles.stop() } }
                let port = try freeLoopbackPort()
                let hub = try RunningHub(
                    configuration: """
                        sessions:
                          - sensors: [walker]
                        http:
                          map_tiles: "\(tiles.url)/{z}/{x}/{y}.png"
                          map_attribution: "© test tiles"
                        """)
                try await hub.prepare(broker)
                try await hub.add(arguments: [
                    ["survey", "--kind", "particulate", "--topic", "survey/air"],
                    ["walker", "--kind", "particulate", "--topic", "walker/air"],
                ])
                try await hub.addUser()
                try await hub.startAndWaitUntilReady(["HUB_HTTP_LISTEN": "127.0.0.1:\(port)"])
                // The city's readings (the survey), then the walk, each stamped a second apart as an AirBeam does.
                let city = RouteFixtures.hotspot()
                let walk = Self.walk()
                let first = Timestamp.now.millisecondsSince1970 - Int64(city.count + walk.count) * 1000
                func payload(_ index: Int, _ reading: (latitude: Double, longitude: Double, pm25: Double)) -> [UInt8] {
                    let time = Timestamp(millisecondsSince1970: first + Int64(index) * 1000).iso8601
                    return Array(
                        (#"{"pm25":\#(reading.pm25),"lat":\#(reading.latitude),"lon":\#(reading.longitude),"#
                            + #""time":"\#(time)"}"#).utf8)
                }
                try await publish(
                    broker,
                    city.enumerated().map { ("survey/air", payload($0, $1)) }
                        + walk.enumerated().map { ("walker/air", payload(city.count + $0, $1)) })
                let world = GeoBoundingBox(south: -90, west: -180, north: 90, east: 180)
                let since = Timestamp(millisecondsSince1970: first - 1000)
                try await eventually("every reading in the history", within: .seconds(60)) {
                    WriteRequest.ask(directory: hub.hubctl.state.path)
                    let history = try? History(directory: hub.hubctl.state.path, create: false)
                    return (try? history?.pollutionReadings(in: world, since: since).matched) == city.count + walk.count
                }
                let origin = "http://127.0.0.1:\(port)"
                try await WebDriver.with { browser in
                    try await browser.logIn(origin)
                    try await look(browser, origin: origin, tiles: tiles)
                }
                await hub.stop()
            }
        }

        func look(_ browser: WebDriver, origin: String, tiles: TestHTTPServer) async throws {
            let folder = ProcessInfo.processInfo.environment["HUB_SCREENSHOTS"]
            func save(_ name: String) async throws {
                guard let folder else { return }
                try await browser.screenshot().write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
            }
            try await browser.open(origin + "/sessions?sensor=walker")
            try await browser.click("table.sessions a")
            try await browser.waitUntil("the walk's track") { try await browser.text("svg.session-map title") != nil }
            let session = try #require(try await browser.script("return location.pathname") as? String)
            // Every tile of the map asked for by the browser, told the hub's origin and nothing of the path.
            let shown = try #require(
                try await browser.script(
                    "return [...document.querySelectorAll('svg.session-map image')].map(i => i.getAttribute('href'))")
                    as? [String])
            #expect((2...30).contains(shown.count), "\(shown.count) tiles")
            let asked = try await tiles.waitForRequests(shown.count)
            #expect(Set(asked.map { tiles.url + $0.path }).isSuperset(of: shown))
            #expect(asked.allSatisfy { $0.header("Referer") == origin + "/" }, "\(asked.map { $0.header("Referer") })")
            // The track crosses the hotspot: its steps there are in the colour of unhealthy air.
            let colours =
                try await browser.script(
                    "return [...document.querySelectorAll('line.segment')].map(l => l.getAttribute('stroke'))")
                as? [String]
            #expect(colours?.contains("#00e400") == true && colours?.contains("#ff0000") == true, "\(colours ?? [])")

            // From the session to the least-polluted way between its ends.
            try await browser.click("a[href^='/route?']")
            try await browser.waitUntil("the route's map") { try await browser.text("svg.route-map title") != nil }
            let ways =
                try await browser.script(
                    "return [...document.querySelectorAll('table.route-figures tbody tr')].map(r => r.innerText.replace(/\\s+/g, ' '))"
                ) as? [String]
            #expect(ways?.count == 2 && ways?.first?.hasPrefix("Least polluted") == true, "\(ways ?? [])")
            #expect(try await browser.text("p.notice")?.contains("% exposure") == true)
            let route = try #require(try await browser.script("return location.pathname + location.search") as? String)
            #expect(try await browser.elements("svg.route-map image").count >= 2)

            for size in DashboardLookTests.sizes {
                try await browser.resize(width: size.width, height: size.height)
                for (name, path, ready) in [("session", session, "svg.session-map"), ("route", route, "svg.route-map")]
                {
                    try await browser.open(origin + path)
                    try await browser.waitUntil("\(name) drawn") { try await browser.text(ready + " title") != nil }
                    try await DashboardLookTests.check(browser, "\(name) at \(size.name)")
                    try await save("\(name)-\(size.name).png")
                }
            }

            // No tile server: the same maps, every line drawn, on the plain ground.
            await tiles.stop()
            for (path, map) in [(session, "svg.session-map line.segment"), (route, "svg.route-map polyline.cleanest")] {
                try await browser.open(origin + path)
                try await browser.waitUntil("\(path) without tiles") { try await browser.text("main h1") != nil }
                let drawn =
                    try await browser.script(
                        "const e = document.querySelector(\"\(map)\"); const b = e && e.getBBox(); return !!b && b.width > 0"
                    ) as? Bool
                #expect(drawn == true, "\(path) without tiles")
            }
        }
    }
}
