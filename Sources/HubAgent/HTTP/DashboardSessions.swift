import Foundation
import HTTPTypes
import HubCore
import HubHistory
import HubSupport
import Hummingbird
import NIOCore

/// The dashboard's session pages, server-rendered like the dashboard and as self-contained (no tiles, no external
/// assets: they work offline): `/sessions` lists recent sessions (of one sensor with `?sensor=`), `/sessions/{id}`
/// shows one with its figures, its track as an SVG map coloured by PM2.5 band and its chart over time.
extension HubAPI {
    /// `?sensor=NAME`: that sensor's sessions of the last 30 days, newest first; without it, every sensor's.
    func sessionsPage(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        var sensor = request.uri.queryParameters.get("sensor")
        if let name = sensor, let found = try await readStore().sensor(named: name) { sensor = found.name }
        let since = Timestamp(millisecondsSince1970: Timestamp.now.millisecondsSince1970 - 30 * 86_400_000)
        var sessions: [SessionSummary] = []
        if let history = try? history.openAll() {
            sessions = (try? await history.sessions(of: sensor, since: since, limit: 200)) ?? []
        }
        let title = sensor.map { "Sessions of \($0)" } ?? "Sessions"
        var html = Self.pageHead(title: title + " · SensorHub") + topBar(context, current: "/sessions")
        html += "<main>\n<h1>\(escape(title))</h1>\n"
        html += Self.sessionTable(
            sessions, showSensor: sensor == nil, current: nil, none: "No sessions in the last 30 days.")
        return Self.page(html)
    }

    /// One session: its figures, map, chart and downloads, then the sensor's other recent sessions.
    func sessionPage(_ context: HubRequestContext) async throws -> Response {
        let id = pathName(context, "id")
        let history = try? history.openAll()
        guard let history, let summary = try? await history.session(id) else {
            var html = Self.pageHead(title: "No such session · SensorHub") + topBar(context, current: "/sessions")
            html += "<main>\n"
            html += "<h1>No such session</h1>\n<p>The history has no session <code>\(escape(id))</code>.</p>\n"
            return Self.page(html, status: .notFound)
        }
        let points = (try? await history.track(of: id, limit: 1_000_000)) ?? []
        let statistics = SessionStatistics(points)
        let sensorLink = "/sessions?sensor=" + WebText.percentEncoded(summary.sensor)
        let title = "\(summary.sensor) · \(Self.dateTime(summary.started))"
        var html = Self.pageHead(title: title + " · SensorHub") + topBar(context, current: "/sessions")
        html += "<main>\n<p><a href=\"\(escape(sensorLink))\">All sessions of \(escape(summary.sensor))</a></p>\n"
        html += "<h1>\(escape(summary.sensor)) · session of \(escape(Self.dateTime(summary.started)))</h1>\n"
        html += Self.figures(summary, statistics)
        html += "<h2>Track</h2>\n<div class=\"map\">\n"
        let map = SessionMap(points)
        if let svg = map.svg(
            title: "Track of \(summary.sensor), \(Self.dateTime(summary.started))", tiles: mapTiles)
        {
            html += svg
        } else {
            html += "<p class=\"no-positions\">No reading of this session has a position: there is no track to draw."
            html += " A mobile sensor's payload gives one as <code>lat</code> and <code>lon</code>.</p>\n"
        }
        let unit = (try? await readStore().sensor(named: summary.sensor))?.format.unit
        let positioned = points.compactMap { $0.position?.point }
        if let first = positioned.first, let last = positioned.last, Geodesy.distance(first, last) >= 50 {
            let ends =
                "from=\(GeoPoint.degrees(first.latitude)),\(GeoPoint.degrees(first.longitude))"
                + "&to=\(GeoPoint.degrees(last.latitude)),\(GeoPoint.degrees(last.longitude))"
            html += "<p><a href=\"/route?\(escape(ends))\">The least-polluted way from this session's start to its "
            html += "end</a></p>\n"
        }
        html += "</div>\n<h2>Over time</h2>\n<div class=\"charts\">\n"
        html += Self.sessionChart(summary, points, unit: unit) + "</div>\n"
        let track = "/api/v1/sessions/" + WebText.percentEncoded(summary.id) + "/track?format="
        html +=
            "<p>Download: "
            + [("gpx", "GPX"), ("geojson", "GeoJSON"), ("csv", "CSV")].map { format, name in
                "<a href=\"\(escape(track + format))\" download>\(name)</a>"
            }.joined(separator: " · ") + "</p>\n"
        let others = try? await history.sessions(
            of: summary.sensor, since: Timestamp(millisecondsSince1970: 0), limit: 20)
        html += "<h2>Recent sessions of \(escape(summary.sensor))</h2>\n"
        html += Self.sessionTable(others ?? [], showSensor: false, current: summary.id)
        return Self.page(html, tiles: mapTiles != nil)
    }

    /// A page; with `tiles`, one whose map shows tiles from another server, which is told the hub's origin (the
    /// Referer OpenStreetMap's tile policy asks for), never a path.
    static func page(_ html: String, status: HTTPResponse.Status = .ok, tiles: Bool = false) -> Response {
        var response = Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: html + "</main></body></html>\n")))
        if tiles { response.headers[.referrerPolicy] = "strict-origin-when-cross-origin" }
        return response
    }

    /// The sessions as a table, each linking to its page.
    static func sessionTable(
        _ sessions: [SessionSummary], showSensor: Bool, current: String?, none: String = "No recorded sessions."
    ) -> String {
        guard !sessions.isEmpty else { return "<p class=\"muted\">\(escape(none))</p>\n" }
        var html = "<table class=\"sessions\"><thead><tr><th>Started</th>"
        html += showSensor ? "<th>Sensor</th>" : ""
        html += "<th>Duration</th><th>Readings</th></tr></thead><tbody>\n"
        for session in sessions {
            let link = "/sessions/" + WebText.percentEncoded(session.id)
            let started = escape(dateTime(session.started))
            html += "<tr><td>" + (session.id == current ? started : "<a href=\"\(escape(link))\">\(started)</a>")
            html += "</td>" + (showSensor ? "<td>\(escape(session.sensor))</td>" : "")
            let length = session.ended.map { duration(session.started.distance(to: $0)) } ?? "recording"
            html += "<td>\(escape(length))</td><td>\(session.readings)</td></tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    /// Duration, distance, readings and what they measured, as a definition list.
    static func figures(_ summary: SessionSummary, _ statistics: SessionStatistics) -> String {
        var rows: [(String, String)] = [
            ("Started", dateTime(summary.started)),
            ("Ended", summary.ended.map(dateTime) ?? "still recording"),
            ("Duration", duration(statistics.duration)),
            ("Distance", distance(statistics.distance)),
            ("Readings", "\(statistics.count) (\(statistics.positioned) with a position)"),
        ]
        for (name, spread, unit) in [
            ("PM2.5", statistics.pm25, " µg/m³"), ("PM10", statistics.pm10, " µg/m³"), ("Value", statistics.value, ""),
        ] {
            guard let spread else { continue }
            let numbers = [spread.min, spread.mean, spread.max].map {
                ParticulateReading.trim(($0 * 10).rounded() / 10)
            }
            rows.append(("\(name) min / mean / max", numbers.joined(separator: " / ") + unit))
        }
        if statistics.pm25 != nil {
            let guideline = ParticulateReading.trim(statistics.guideline)
            rows.append(("Above the WHO guideline (\(guideline) µg/m³)", duration(statistics.aboveGuideline)))
        }
        return "<dl class=\"figures\">"
            + rows.map { "<dt>\(escape($0.0))</dt><dd>\(escape($0.1))</dd>" }.joined() + "</dl>\n"
    }

    /// The most points a session's chart draws: more are averaged over equal spans of time.
    static let chartPoints = 1000

    /// PM2.5 (with the WHO guideline) over the session, or a numeric sensor's value in `unit`: the dashboard's
    /// chart, of means over equal spans when the session has more than `chartPoints` readings.
    static func sessionChart(_ summary: SessionSummary, _ points: [TrackPoint], unit: String? = nil) -> String {
        let particulate = points.contains { $0.pm25 != nil }
        var series = points.compactMap { point in
            (particulate ? point.pm25 : point.value).map { (point.time.millisecondsSince1970, $0) }
        }
        let start = summary.started.millisecondsSince1970
        let end = max(
            summary.ended?.millisecondsSince1970 ?? Timestamp.now.millisecondsSince1970,
            series.last?.0 ?? start, start + 1000)
        if series.count > chartPoints {
            series = means(series, from: start, to: end, count: chartPoints)
        }
        let guideline = WHOGuideline.guideline(.pm25, .day)
        let title = particulate ? "PM2.5 µg/m³ · \(summary.sensor)" : summary.sensor + (unit.map { " \($0)" } ?? "")
        return svg(
            title: title, points: series, from: start, to: end,
            guideline: particulate ? ("WHO 24 h guideline \(ParticulateReading.trim(guideline))", guideline) : nil)
    }

    /// The mean of the values in each of `count` equal spans from `start` to `end`, at the span's middle; empty
    /// spans left out.
    static func means(_ series: [(Int64, Double)], from start: Int64, to end: Int64, count: Int) -> [(Int64, Double)] {
        let span = max(1, Double(end - start) / Double(count))
        var sums = [(total: Double, n: Int)](repeating: (0, 0), count: count)
        for (time, value) in series {
            let bucket = min(count - 1, max(0, Int(Double(time - start) / span)))
            sums[bucket].total += value
            sums[bucket].n += 1
        }
        return sums.enumerated().compactMap { index, sum in
            sum.n == 0 ? nil : (start + Int64((Double(index) + 0.5) * span), sum.total / Double(sum.n))
        }
    }

    /// `2026-11-25 18:20:05 UTC`.
    static func dateTime(_ time: Timestamp) -> String {
        let text = time.iso8601
        return text.prefix(10) + " " + text.dropFirst(11).prefix(8) + " UTC"
    }

    /// `42 s`, `12 min 5 s`, `1 h 20 min`.
    static func duration(_ duration: Duration) -> String {
        let seconds = Int(duration.seconds.rounded())
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" + (seconds % 60 == 0 ? "" : " \(seconds % 60) s") }
        return "\(seconds / 3600) h" + (seconds % 3600 / 60 == 0 ? "" : " \(seconds % 3600 / 60) min")
    }

    /// `850 m`, `2.35 km`.
    static func distance(_ metres: Double) -> String {
        metres < 1000 ? "\(Int(metres.rounded())) m" : String(format: "%.2f km", metres / 1000)
    }
}
