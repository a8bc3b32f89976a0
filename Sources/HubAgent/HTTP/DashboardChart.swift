import Foundation
import HubCore
import HubHistory
import HubSupport
import Hummingbird
import NIOCore

/// The dashboard's charts, as SVG: a particulate sensor's PM2.5 or PM10 with the WHO 24-hour guideline, or a numeric
/// sensor's value in its unit; one series of the history over a period either way.
extension HubAPI {
    /// What one chart shows.
    struct ChartSubject {
        /// The sensor whose readings it draws; empty when there is no particulate sensor yet (an empty chart).
        var sensor: String
        var series: History.Series
        /// What the chart is of, with its unit: `PM2.5 µg/m³`, `living room °C`.
        var title: String
        /// What it is of, and its unit, apart: `living room`, `°C`.
        var name: String
        var unit: String?
        /// A level drawn dashed, with its label.
        var guideline: (label: String, value: Double)?
    }

    /// A point of a chart: its time, and the lowest, mean and highest value of its bucket (one reading: all three).
    struct ChartPoint: Sendable, Encodable {
        var time: Int64
        var min: Double
        var mean: Double
        var max: Double

        func encode(to encoder: any Encoder) throws {
            var row = encoder.unkeyedContainer()
            try row.encode(time)
            try row.encode(min)
            try row.encode(mean)
            try row.encode(max)
        }
    }

    /// What `period` covers, and how a chart of it buckets the readings (none: each reading).
    static let chartSpans: [String: (Duration, History.Period?)] = [
        "hour": (.seconds(3600), nil), "day": (.seconds(86_400), .hour), "week": (.seconds(7 * 86_400), .hour),
        "month": (.seconds(30 * 86_400), .day),
    ]

    /// One series over a period, as the charts draw it: each reading over an hour; over longer, per hour (per day for
    /// a month) with each bucket's lowest and highest, unless the history is younger than three buckets, when each
    /// reading is (a new hub's day is a line, not one dot).
    func chartPoints(_ request: Request) async throws -> (ChartSubject, [ChartPoint], from: Int64, to: Int64, String) {
        let periodText = request.uri.queryParameters.get("period").map { String($0) } ?? "day"
        guard let (span, period) = Self.chartSpans[periodText] else {
            throw HTTPError(.badRequest, message: "period is hour, day, week or month")
        }
        let subject = try await chartSubject(request)
        let end = Timestamp.now.millisecondsSince1970
        let start = end - Int64(span.seconds * 1000)
        var points: [ChartPoint] = []
        if !subject.sensor.isEmpty, let history = try? history.openAll() {
            let since = Timestamp(millisecondsSince1970: start)
            let series = subject.series
            if let period {
                let rows = (try? await history.aggregates(of: subject.sensor, since: since, per: period)) ?? []
                points = rows.compactMap { row in
                    row[series].map {
                        ChartPoint(time: row.start.millisecondsSince1970, min: $0.min, mean: $0.mean, max: $0.max)
                    }
                }
            }
            if points.count < 3 {
                let readings = (try? await history.readings(of: subject.sensor, since: since)) ?? []
                points = readings.compactMap { reading in
                    series.value(of: reading).map {
                        ChartPoint(time: reading.time.millisecondsSince1970, min: $0, mean: $0, max: $0)
                    }
                }
            }
        }
        return (subject, points, start, end, periodText)
    }

    /// A line chart of one series over a period (the session pages and a page without script): the means.
    /// `sensor=<name>` of a numeric sensor charts its value; otherwise `pollutant=pm25|pm10` of the particulate
    /// sensor named, or of the first one.
    func chart(_ request: Request) async throws -> Response {
        let (subject, points, start, end, period) = try await chartPoints(request)
        let svg = Self.svg(
            title: "\(subject.title) · last \(period)", points: points.map { ($0.time, $0.mean) }, from: start, to: end,
            guideline: subject.guideline)
        return Response(
            status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    struct ChartAnswer: Encodable {
        struct Line: Encodable {
            var label: String
            var value: Double
        }
        var title: String
        var unit: String?
        /// Levels drawn dashed: a pollutant's WHO guideline, a numeric sensor's `thresholds:` on its value.
        var lines: [Line]
        /// A pollutant's axis starts at zero (its guideline in view); another spans its values.
        var fromZero: Bool
        var from: Int64
        var to: Int64
        /// `[time, min, mean, max]` rows, oldest first (times in milliseconds since 1970).
        var points: [ChartPoint]
    }

    /// `/dashboard/chart.json`: the same series as JSON, for the dashboard's interactive charts (a time axis, hover
    /// values, the bucket's lowest and highest as a band, the guideline drawn, zoom).
    func chartData(_ request: Request) async throws -> Response {
        let (subject, points, start, end, _) = try await chartPoints(request)
        var lines = subject.guideline.map { [ChartAnswer.Line(label: $0.label, value: $0.value)] } ?? []
        if subject.series == .value {
            for rule in snapshot(false).thresholds where rule.attribute == nil && rule.applies(to: subject.sensor) {
                let format = ValueFormat()
                if let above = rule.limit.above {
                    lines.append(.init(label: "\(rule.name): above \(format.format(above))", value: above))
                }
                if let below = rule.limit.below {
                    lines.append(.init(label: "\(rule.name): below \(format.format(below))", value: below))
                }
            }
        }
        return json(
            ChartAnswer(
                title: subject.name, unit: subject.unit, lines: lines, fromZero: subject.guideline != nil, from: start,
                to: end, points: points))
    }

    /// The sensor and series a chart request names; a status sensor has nothing to chart.
    func chartSubject(_ request: Request) async throws -> ChartSubject {
        let document = try await readStore()
        var named: Sensor?
        if let name = request.uri.queryParameters.get("sensor") {
            guard let sensor = document.sensor(named: String(name)) else {
                throw HTTPError(.notFound, message: "no sensor named '\(name)'")
            }
            named = sensor
        }
        if let sensor = named, sensor.kind == .numeric {
            let title = sensor.format.unit.map { "\(sensor.name) \($0)" } ?? sensor.name
            return ChartSubject(
                sensor: sensor.name, series: .value, title: title, name: sensor.name, unit: sensor.format.unit)
        }
        if let sensor = named, sensor.kind != .particulate {
            throw HTTPError(
                .badRequest, message: "'\(sensor.name)' is a \(sensor.kind) sensor: it has no readings to chart")
        }
        let pollutant: Pollutant = request.uri.queryParameters.get("pollutant") == "pm10" ? .pm10 : .pm25
        let guideline = WHOGuideline.guideline(pollutant, .day)
        return ChartSubject(
            sensor: named?.name ?? document.sensors.first { $0.kind == .particulate }?.name ?? "",
            series: pollutant == .pm25 ? .pm25 : .pm10, title: "\(pollutant.rawValue) µg/m³", name: pollutant.rawValue,
            unit: "µg/m³",
            guideline: ("WHO 24 h guideline \(ParticulateReading.trim(guideline))", guideline))
    }

    /// The chart: a pollutant's from zero (its guideline in view), any other series' around its values.
    static func svg(
        title: String, points: [(Int64, Double)], from start: Int64, to end: Int64,
        guideline: (label: String, value: Double)?
    ) -> String {
        let width = 640.0
        let height = 220.0
        let left = 44.0
        let bottom = 24.0
        let top = 28.0
        let values = points.map(\.1)
        let (lowest, highest) = (values.min() ?? 0, values.max() ?? 0)
        let minimum: Double
        let maximum: Double
        if let guideline {
            (minimum, maximum) = (0, max(highest * 1.1, guideline.value * 1.3, 1))
        } else {
            // A temperature of 21 °C, a pressure of 1004 hPa: the axis spans the values, not zero to them.
            let margin = highest > lowest ? (highest - lowest) * 0.1 : max(abs(highest) * 0.05, 1)
            (minimum, maximum) = (lowest - margin, highest + margin)
        }
        let label = ValueFormat(decimals: maximum - minimum >= 10 ? 0 : 1)
        func x(_ time: Int64) -> Double {
            left + (width - left - 8) * Double(time - start) / Double(max(end - start, 1))
        }
        func y(_ value: Double) -> Double {
            height - bottom - (height - bottom - top) * (value - minimum) / (maximum - minimum)
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(escape(title))">
            <rect width="100%" height="100%" fill="#fff"/>
            <text x="\(left)" y="18" font-size="13" font-family="sans-serif" fill="#1d2330">\(escape(title))</text>
            <line x1="\(left)" y1="\(y(minimum))" x2="\(width - 8)" y2="\(y(minimum))" stroke="#c8ced8"/>
            <text x="4" y="\(y(maximum) + 10)" font-size="11" font-family="sans-serif" fill="#5b6472">\(label.format(maximum))</text>
            <text x="4" y="\(y(minimum))" font-size="11" font-family="sans-serif" fill="#5b6472">\(label.format(minimum))</text>

            """
        if let guideline {
            svg += """
                <line x1="\(left)" y1="\(y(guideline.value))" x2="\(width - 8)" y2="\(y(guideline.value))" stroke="#d92d20" stroke-dasharray="6 4"/>
                <text x="\(width - 150)" y="\(y(guideline.value) - 4)" font-size="11" font-family="sans-serif" fill="#d92d20">\(escape(guideline.label))</text>

                """
        }
        if points.isEmpty {
            svg +=
                "<text x=\"\(width / 2 - 60)\" y=\"\(height / 2)\" font-size=\"13\" font-family=\"sans-serif\" fill=\"#5b6472\">No readings yet</text>\n"
        } else {
            let path = points.map { point in
                FixedDecimal.text(x(point.0), places: 1) + "," + FixedDecimal.text(y(point.1), places: 1)
            }.joined(separator: " ")
            svg +=
                "<polyline class=\"series\" points=\"\(path)\" fill=\"none\" stroke=\"#2563eb\" stroke-width=\"2\"/>\n"
            if points.count == 1 {
                svg += "<circle cx=\"\(x(points[0].0))\" cy=\"\(y(points[0].1))\" r=\"3\" fill=\"#2563eb\"/>\n"
            }
        }
        return svg + "</svg>\n"
    }
}
