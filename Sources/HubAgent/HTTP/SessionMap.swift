import Foundation
import HubCore
import HubSupport

/// A session's track as an SVG map with no tiles (the page works offline): the positions in the equirectangular
/// projection around the track's centre (`LocalProjection`: metres east and north, a degree of longitude shrunk by
/// the cosine of the latitude), fitted to the picture with a margin, north up; a line per step between two
/// readings in the AQI colour of the PM2.5 the step starts with, start and end markers, a scale bar and a legend.
struct SessionMap {
    /// A positioned reading: metres east and north of the track's centre, and its PM2.5 if it measured one.
    struct Point {
        var x: Double
        var y: Double
        var pm25: Double?
    }

    let points: [Point]

    static let width = 640.0
    /// The map's part of the picture; the legend is below it.
    static let mapHeight = 400.0
    static let legendHeight = 92.0
    static let margin = 28.0
    /// More steps are drawn as fewer (each the worst PM2.5 of the readings it stands for): a day at one reading a
    /// second would be 86,400 lines.
    static let maximumSegments = 3000
    /// The smallest extent drawn, in metres: a track of a few metres is not blown up to fill the map.
    static let minimumSpan = 40.0
    /// For steps of a sensor that measures no PM2.5 (a numeric one).
    static let noPM25Colour = "#667085"

    /// Only the readings with a position count.
    init(_ track: [TrackPoint]) {
        let positions = track.compactMap { point in point.position.map { ($0.point, point.pm25) } }
        guard let box = GeoBoundingBox(around: positions.map(\.0)) else {
            points = []
            return
        }
        let projection = LocalProjection(origin: box.centre)
        points = positions.map { position, pm25 in
            let (x, y) = projection.project(position)
            return Point(x: x, y: y, pm25: pm25)
        }
    }

    var isEmpty: Bool { points.isEmpty }

    /// The steps drawn: from one reading to the next, or to the `stride`th next when there are too many, with the
    /// worst PM2.5 among the readings a step stands for.
    var segments: (steps: [(from: Point, to: Point, pm25: Double?)], stride: Int) {
        guard points.count >= 2 else { return ([], 1) }
        let stride = max(1, Int((Double(points.count - 1) / Double(Self.maximumSegments)).rounded(.up)))
        var steps: [(from: Point, to: Point, pm25: Double?)] = []
        var index = 0
        while index < points.count - 1 {
            let next = min(index + stride, points.count - 1)
            let worst = points[index..<next].compactMap(\.pm25).max()
            steps.append((points[index], points[next], worst))
            index = next
        }
        return (steps, stride)
    }

    /// The step's colour: its PM2.5's AQI category's (`AQI.categories`, the dashboard's one table).
    static func colour(pm25: Double?) -> String { pm25.map { AQI.category(pm25: $0).hex } ?? noPM25Colour }

    /// The picture, titled `title` (escaped), or `nil` when no reading has a position.
    func svg(title: String) -> String? {
        guard !points.isEmpty else { return nil }
        let width = Self.width
        let mapHeight = Self.mapHeight
        let xs = points.map(\.x)
        let ys = points.map(\.y)
        let (west, east, south, north) = (xs.min()!, xs.max()!, ys.min()!, ys.max()!)
        let scale = min(
            (width - 2 * Self.margin) / max(east - west, Self.minimumSpan),
            (mapHeight - 2 * Self.margin) / max(north - south, Self.minimumSpan))
        let (midX, midY) = ((west + east) / 2, (south + north) / 2)
        func sx(_ x: Double) -> String { Self.format(width / 2 + (x - midX) * scale) }
        func sy(_ y: Double) -> String { Self.format(mapHeight / 2 - (y - midY) * scale) }
        let height = mapHeight + Self.legendHeight
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="session-map" viewBox="0 0 \(Int(width)) \(Int(height))" \
            role="img" aria-label="\(escape(title))">
            <title>\(escape(title))</title>
            <rect width="100%" height="\(Int(mapHeight))" fill="#f8fafc" stroke="#d0d5dd"/>
            <text x="\(Int(width) - 26)" y="22" font-size="12" font-family="sans-serif" fill="#5b6472">N ↑</text>

            """
        let (steps, stride) = segments
        // A dark casing under the coloured lines, so that yellow shows on the light ground.
        if let first = steps.first {
            let casing = ([first.from] + steps.map(\.to)).map { "\(sx($0.x)),\(sy($0.y))" }.joined(separator: " ")
            svg += "<polyline class=\"casing\" points=\"\(casing)\" fill=\"none\" stroke=\"#1d2330\" "
            svg += "stroke-opacity=\".45\" stroke-width=\"7\" stroke-linecap=\"round\" stroke-linejoin=\"round\"/>\n"
        }
        svg += "<g class=\"track\" stroke-width=\"4\" stroke-linecap=\"round\" fill=\"none\">\n"
        for step in steps {
            let pm25 = step.pm25.map { " data-pm25=\"\(ParticulateReading.trim(($0 * 10).rounded() / 10))\"" } ?? ""
            svg += "<line class=\"segment\" x1=\"\(sx(step.from.x))\" y1=\"\(sy(step.from.y))\" "
            svg +=
                "x2=\"\(sx(step.to.x))\" y2=\"\(sy(step.to.y))\" stroke=\"\(Self.colour(pm25: step.pm25))\"\(pm25)/>\n"
        }
        svg += "</g>\n"
        let (first, last) = (points.first!, points.last!)
        svg += """
            <circle class="start" cx="\(sx(first.x))" cy="\(sy(first.y))" r="7" fill="#fff" stroke="#1d2330" \
            stroke-width="3"><title>Start</title></circle>
            <circle class="end" cx="\(sx(last.x))" cy="\(sy(last.y))" r="6" fill="#1d2330" stroke="#fff" \
            stroke-width="2"><title>End</title></circle>

            """
        svg += scaleBar(scale: scale)
        svg += legend(stride: stride)
        return svg + "</svg>\n"
    }

    /// A bar of 1, 2 or 5 × 10ⁿ metres, at most a quarter of the map's width, in its bottom left corner.
    private func scaleBar(scale: Double) -> String {
        let metres = Self.scaleLength(for: Self.width / 4 / scale)
        let length = metres * scale
        let (x, y) = (Self.margin / 2, Self.mapHeight - 14)
        let label =
            metres >= 1000 ? "\(ParticulateReading.trim(metres / 1000)) km" : "\(ParticulateReading.trim(metres)) m"
        return """
            <g class="scale" stroke="#1d2330" stroke-width="2">\
            <line x1="\(Self.format(x))" y1="\(Self.format(y))" x2="\(Self.format(x + length))" y2="\(Self.format(y))"/>\
            <line x1="\(Self.format(x))" y1="\(Self.format(y - 5))" x2="\(Self.format(x))" y2="\(Self.format(y))"/>\
            <line x1="\(Self.format(x + length))" y1="\(Self.format(y - 5))" x2="\(Self.format(x + length))" \
            y2="\(Self.format(y))"/></g>
            <text class="scale-label" x="\(Self.format(x))" y="\(Self.format(y - 8))" font-size="11" \
            font-family="sans-serif" fill="#1d2330">\(label)</text>

            """
    }

    /// The longest 1, 2 or 5 × 10ⁿ metres not over `metres` (1 m at least).
    static func scaleLength(for metres: Double) -> Double {
        guard metres > 1 else { return 1 }
        let power = pow(10, (log10(metres)).rounded(.down))
        return [5, 2, 1].map { $0 * power }.first { $0 <= metres } ?? power
    }

    /// The AQI categories with their PM2.5 ranges, two columns of three; then the markers, and what a grey step or
    /// a thinned track means when there are any.
    private func legend(stride: Int) -> String {
        var svg = "<g class=\"legend\" font-size=\"11\" font-family=\"sans-serif\" fill=\"#1d2330\">\n"
        let top = Self.mapHeight + 10
        for (index, range) in AQI.pm25Ranges.enumerated() {
            // The first column holds the longest name ("Unhealthy for Sensitive Groups · PM2.5 35.5–55.4 µg/m³").
            let x = index < 3 ? 8.0 : 368.0
            let y = top + Double(index % 3) * 18
            let span =
                index == AQI.categories.count - 1
                ? "≥ \(ParticulateReading.trim(range.low))"
                : "\(ParticulateReading.trim(range.low))–\(ParticulateReading.trim(range.high))"
            svg += "<rect x=\"\(Int(x))\" y=\"\(Int(y))\" width=\"18\" height=\"10\" fill=\"\(range.category.hex)\"/>"
            svg += "<text x=\"\(Int(x) + 24)\" y=\"\(Int(y) + 9)\">\(escape(range.category.name)) · PM2.5 \(span) µg/m³"
            svg += "</text>\n"
        }
        var notes = ["○ start", "● end"]
        if points.contains(where: { $0.pm25 == nil }) { notes.append("grey: no PM2.5") }
        if stride > 1 { notes.append("each line \(stride) readings, in the colour of the worst") }
        svg += "<text x=\"8\" y=\"\(Int(top) + 66)\">\(escape(notes.joined(separator: " · ")))</text>\n"
        return svg + "</g>\n"
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
