import Foundation
import HubCore
import HubSupport

/// A session's track as an SVG map on `MapFrame`'s ground (tiles when configured, a plain ground without them or
/// off the network): a line per step between two readings in the AQI colour of the PM2.5 the step starts with,
/// start and end markers, a scale bar and a legend.
struct SessionMap {
    /// A positioned reading: metres east and north of the track's centre, and its PM2.5 if it measured one.
    struct Point {
        var x: Double
        var y: Double
        var pm25: Double?
    }

    let points: [Point]
    /// The ground, fitted to the track; nil without positions.
    let frame: MapFrame?

    static let legendHeight = 92.0
    /// More steps are drawn as fewer (each the worst PM2.5 of the readings it stands for): a day at one reading a
    /// second would be 86,400 lines.
    static let maximumSegments = 3000
    /// For steps of a sensor that measures no PM2.5 (a numeric one).
    static let noPM25Colour = "#667085"

    /// Only the readings with a position count.
    init(_ track: [TrackPoint]) {
        let positions = track.compactMap { point in point.position.map { ($0.point, point.pm25) } }
        guard let box = GeoBoundingBox(around: positions.map(\.0)) else {
            points = []
            frame = nil
            return
        }
        let projection = LocalProjection(origin: box.centre)
        points = positions.map { position, pm25 in
            let (x, y) = projection.project(position)
            return Point(x: x, y: y, pm25: pm25)
        }
        frame = MapFrame(projection: projection, projected: points.map { ($0.x, $0.y) })
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

    /// The picture, titled `title` (escaped), over `tiles` if given, or `nil` when no reading has a position.
    func svg(title: String, tiles: MapTiles? = nil) -> String? {
        guard let frame else { return nil }
        let sx = frame.sx
        let sy = frame.sy
        var svg = frame.open(
            title: title, height: MapFrame.mapHeight + Self.legendHeight, tiles: tiles, className: "session-map")
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
        svg += frame.scaleBar() + frame.attribution(tiles)
        svg += legend(stride: stride)
        return svg + "</svg>\n"
    }

    /// The AQI categories with their PM2.5 ranges, two columns of three; then the markers, and what a grey step or
    /// a thinned track means when there are any.
    private func legend(stride: Int) -> String {
        var svg = "<g class=\"legend\" font-size=\"11\" font-family=\"sans-serif\" fill=\"#1d2330\">\n"
        let top = MapFrame.mapHeight + 10
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

}
