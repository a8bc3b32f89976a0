import Foundation
import HubCore
import HubSupport
import Hummingbird
import NIOCore

/// `/route`: the least-polluted route beside the shortest, planned as `GET /api/v1/route` plans it (the same
/// parameters, checked the same way, the same planner) and drawn with their figures on one map — the readings it
/// was planned on as dots in their AQI colour, so that a person sees why the route bends. A form asks for the two
/// ends; a session's page links here with its own start and end.
extension HubAPI {
    func routePage(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let from = query.get("from") ?? ""
        let to = query.get("to") ?? ""
        var html = Self.pageHead(title: "Route · SensorHub") + topBar(context, current: "/route")
        html += "<main>\n<h1>The cleanest way there</h1>\n"
        html += Self.routeForm(from: from, to: to, since: query.get("since") ?? "30d")
        guard !from.isEmpty || !to.isEmpty else {
            html += "<p class=\"muted\">The route is planned over the PM2.5 readings mobile sensors took on their "
            html += "sessions, and drawn beside the shortest way between the same two places. A session's page "
            html += "offers its own start and end.</p>\n"
            return Self.page(html)
        }
        let plan: RoutePlan
        let readings: [PollutionReading]
        do {
            let (route, since, sensors, _, _) = try await routeRequest(request)
            (plan, readings) = try await self.plan(route, since: since, sensors: sensors)
        } catch let error as HTTPError {
            html += "<p class=\"error\" role=\"alert\">No route: \(escape(error.body ?? "\(error.status)"))</p>\n"
            return Self.page(html, status: error.status)
        }
        html += Self.routeFigures(plan)
        html += "<div class=\"map\">\n"
        html += RouteMap(plan: plan, readings: readings).svg(tiles: mapTiles)
        html += "</div>\n"
        var download = URLComponents()
        download.path = "/api/v1/route"
        download.queryItems =
            (request.uri.queryParameters.map { URLQueryItem(name: String($0.key), value: String($0.value)) })
            .filter { !["format", "shortest"].contains($0.name) } + [URLQueryItem(name: "shortest", value: "true")]
        let link = download.string ?? "/api/v1/route"
        html += "<p>Download both: <a href=\"\(escape(link))&amp;format=geojson\" download>GeoJSON</a> · "
        html += "<a href=\"\(escape(link))&amp;format=gpx\" download>GPX</a></p>\n"
        return Self.page(html, tiles: mapTiles != nil)
    }

    /// The two ends as `LAT,LON`, and how far back the readings go.
    static func routeForm(from: String, to: String, since: String) -> String {
        var html = "<form class=\"filters\" method=\"get\" action=\"/route\">"
        for (name, label, value) in [("from", "From (lat,lon)", from), ("to", "To (lat,lon)", to)] {
            html += "<label>\(label)<input name=\"\(name)\" value=\"\(escape(value))\" required "
            html += "inputmode=\"decimal\" placeholder=\"52.0907,5.1214\" autocomplete=\"off\"></label>"
        }
        html += "<label>Readings of the last<select name=\"since\">"
        for (value, name) in [("7d", "7 days"), ("30d", "30 days"), ("90d", "90 days"), ("365d", "year")] {
            html += "<option value=\"\(value)\"\(value == since ? " selected" : "")>\(name)</option>"
        }
        return html + "</select></label><button class=\"primary\">Plan</button></form>\n"
    }

    /// The two ways side by side: length, mean PM2.5 along, exposure; then what the detour buys.
    static func routeFigures(_ plan: RoutePlan) -> String {
        let route = plan.route
        var html = "<table class=\"cards route-figures\"><thead><tr><th>Way</th><th>Length</th>"
        html += "<th>Mean PM2.5</th><th>Exposure</th></tr></thead><tbody>\n"
        for (name, className, length, mean, exposure) in [
            ("Least polluted", "cleanest", route.length, route.meanPM25, route.exposure),
            ("Shortest", "shortest", route.shortestLength, route.shortestMeanPM25, route.shortestExposure),
        ] {
            let meanText = mean.map { ParticulateReading.trim(($0 * 10).rounded() / 10) + " µg/m³" } ?? "–"
            html += "<tr class=\"\(className)\"><td data-label=\"Way\">\(name)</td>"
            html += "<td data-label=\"Length\">\(escape(distance(length)))</td>"
            html += "<td data-label=\"Mean PM2.5\">\(escape(meanText))</td>"
            html += "<td data-label=\"Exposure\">\(Int(exposure.rounded())) µg/m³·m</td></tr>\n"
        }
        html += "</tbody></table>\n<p class=\"notice\">The least-polluted way: \(escape(plan.detour)).</p>\n"
        var notes = ["\(plan.readings) readings", plan.alongRoads ? "along the roads" : "across a grid"]
        if route.defaultedCells > 0 {
            notes.append(
                "\(route.defaultedCells) of \(plan.cells) cells had no reading near and count at "
                    + "\(ParticulateReading.trim(route.defaultValue)) µg/m³")
        }
        return html + "<p class=\"muted\">Planned on \(escape(notes.joined(separator: "; "))).</p>\n"
    }
}

/// The least-polluted route and the shortest on one `MapFrame`: the shortest dashed in slate, the route solid in
/// blue over a white casing (told apart by more than colour), the readings as dots in their AQI colour, start and
/// end marked, and a legend.
struct RouteMap {
    let plan: RoutePlan
    let readings: [PollutionReading]

    static let legendHeight = 56.0
    /// The most reading dots drawn: more are thinned evenly.
    static let maximumDots = 1500

    func svg(tiles: MapTiles?) -> String {
        let route = plan.route
        let places = route.points + route.shortestPoints
        guard let frame = MapFrame(around: places) else { return "" }
        let title =
            "Least-polluted route, \(HubAPI.distance(route.length)), beside the shortest, "
            + HubAPI.distance(route.shortestLength)
        var svg = frame.open(
            title: title, height: MapFrame.mapHeight + Self.legendHeight, tiles: tiles, className: "route-map")
        // Each reading placed on the picture once; those off it left out.
        let inside = readings.compactMap { reading -> (x: Double, y: Double, pm25: Double)? in
            let (x, y) = frame.projection.project(reading.point)
            let (px, py) = (frame.px(x), frame.py(y))
            guard (0...MapFrame.width).contains(px), (0...MapFrame.mapHeight).contains(py) else { return nil }
            return (px, py, reading.pm25)
        }
        let stride = max(1, (inside.count + Self.maximumDots - 1) / Self.maximumDots)
        svg += "<g class=\"readings\" fill-opacity=\".75\">\n"
        for index in Swift.stride(from: 0, to: inside.count, by: stride) {
            let dot = inside[index]
            svg += "<circle cx=\"\(MapFrame.format(dot.x))\" cy=\"\(MapFrame.format(dot.y))\" r=\"3\" "
            svg += "fill=\"\(AQI.category(pm25: dot.pm25).hex)\"/>\n"
        }
        svg += "</g>\n"
        let shortest = route.shortestPoints.map(frame.pair).joined(separator: " ")
        let cleanest = route.points.map(frame.pair).joined(separator: " ")
        svg += """
            <polyline class="shortest" points="\(shortest)" fill="none" stroke="#344054" stroke-width="4" \
            stroke-dasharray="9 7" stroke-linecap="round" stroke-linejoin="round"/>
            <polyline class="casing" points="\(cleanest)" fill="none" stroke="#ffffff" stroke-width="9" \
            stroke-linecap="round" stroke-linejoin="round"/>
            <polyline class="cleanest" points="\(cleanest)" fill="none" stroke="#1d4ed8" stroke-width="5" \
            stroke-linecap="round" stroke-linejoin="round"/>

            """
        if let first = route.points.first, let last = route.points.last {
            let (start, end) = (frame.projection.project(first), frame.projection.project(last))
            svg += """
                <circle class="start" cx="\(frame.sx(start.x))" cy="\(frame.sy(start.y))" r="7" fill="#fff" \
                stroke="#1d2330" stroke-width="3"><title>Start</title></circle>
                <circle class="end" cx="\(frame.sx(end.x))" cy="\(frame.sy(end.y))" r="6" fill="#1d2330" \
                stroke="#fff" stroke-width="2"><title>End</title></circle>

                """
        }
        svg += frame.scaleBar() + frame.attribution(tiles) + legend()
        return svg + "</svg>\n"
    }

    private func legend() -> String {
        let top = MapFrame.mapHeight + 16
        let route = plan.route
        func figures(_ length: Double, _ mean: Double?) -> String {
            HubAPI.distance(length)
                + (mean.map { ", mean PM2.5 \(ParticulateReading.trim(($0 * 10).rounded() / 10)) µg/m³" } ?? "")
        }
        return """
            <g class="legend" font-size="12" font-family="sans-serif" fill="#1d2330">
            <line x1="8" y1="\(Int(top))" x2="40" y2="\(Int(top))" stroke="#1d4ed8" stroke-width="5"/>\
            <text x="48" y="\(Int(top) + 4)">Least polluted: \(escape(figures(route.length, route.meanPM25)))</text>
            <line x1="8" y1="\(Int(top) + 22)" x2="40" y2="\(Int(top) + 22)" stroke="#344054" stroke-width="4" \
            stroke-dasharray="9 7"/><text x="48" y="\(Int(top) + 26)">Shortest: \
            \(escape(figures(route.shortestLength, route.shortestMeanPM25))) · dots: readings, in their AQI colour</text>
            </g>

            """
    }
}
