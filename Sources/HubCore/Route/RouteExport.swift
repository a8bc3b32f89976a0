import Foundation
import HubSupport

extension Route {
    /// The route as a GeoJSON Feature (RFC 7946): a LineString of [longitude, latitude] positions, with
    /// `length_m`, `exposure`, `shortest_length_m`, `shortest_exposure`, `defaulted_cells` and `default_pm25` as
    /// properties. A zero-length route repeats its one point, since a LineString needs two positions. `readings`,
    /// when given, is the number of readings the pollution grid was made from.
    public func geoJSON(name: String? = nil, readings: Int? = nil) -> String {
        var json = JSONWriter(compact: true)
        feature(&json, Self.line(points), name: name, readings: readings, shortest: false)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// The route and the shortest path as a GeoJSON FeatureCollection of two LineStrings: first the route's
    /// Feature as `geoJSON` writes it, then the shortest path's, each with `route` (`least-polluted`, `shortest`),
    /// `length_m`, `exposure` and `mean_pm25` (exposure over length), so that a map draws both with their figures.
    public func geoJSONWithShortest(readings: Int? = nil) -> String {
        var json = JSONWriter(compact: true)
        json.raw("{\"type\":\"FeatureCollection\",\"features\":[")
        feature(&json, Self.line(points), name: nil, readings: readings, shortest: false)
        json.raw(",")
        feature(&json, Self.line(shortestPoints), name: nil, readings: nil, shortest: true)
        json.raw("]}")
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// µg/m³ breathed on average along the route (exposure over length), or nil for a route of 0 m.
    public var meanPM25: Double? { length > 0 ? exposure / length : nil }
    public var shortestMeanPM25: Double? { shortestLength > 0 ? shortestExposure / shortestLength : nil }

    /// One Feature: the least-polluted route with every figure, or the shortest path with its own.
    private func feature(_ json: inout JSONWriter, _ line: [GeoPoint], name: String?, readings: Int?, shortest: Bool) {
        var first = true
        json.raw("{")
        json.key("type", first: &first)
        json.string("Feature")
        json.key("geometry", first: &first)
        json.raw("{\"type\":\"LineString\",\"coordinates\":[")
        for (index, point) in line.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("[\(GeoPoint.degrees(point.longitude)),\(GeoPoint.degrees(point.latitude))]")
        }
        json.raw("]}")
        json.key("properties", first: &first)
        var inner = true
        json.raw("{")
        if let name {
            json.key("name", first: &inner)
            json.string(name)
        }
        json.key("route", first: &inner)
        json.string(shortest ? "shortest" : "least-polluted")
        json.key("length_m", first: &inner)
        json.number(Self.rounded(shortest ? shortestLength : length))
        json.key("exposure", first: &inner)
        json.number(Self.rounded(shortest ? shortestExposure : exposure))
        if let mean = shortest ? shortestMeanPM25 : meanPM25 {
            json.key("mean_pm25", first: &inner)
            json.number(Self.rounded(mean))
        }
        if !shortest {
            json.key("shortest_length_m", first: &inner)
            json.number(Self.rounded(shortestLength))
            json.key("shortest_exposure", first: &inner)
            json.number(Self.rounded(shortestExposure))
            json.key("defaulted_cells", first: &inner)
            json.number(defaultedCells)
            json.key("default_pm25", first: &inner)
            json.number(defaultValue)
            if let readings {
                json.key("readings", first: &inner)
                json.number(readings)
            }
        }
        json.raw("}}")
    }

    /// The route as a GPX 1.1 track (one trk, one trkseg), with its name and creator escaped for XML.
    /// With `shortest`, the shortest path follows as a second track.
    public func gpx(name: String = "Least-polluted route", creator: String = "SensorHub", shortest: Bool = false)
        -> String
    {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text +=
            "<gpx version=\"1.1\" creator=\"\(WebText.html(creator))\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
        func track(_ name: String, _ description: String, _ points: [GeoPoint]) {
            text += "  <trk>\n    <name>\(WebText.html(name))</name>\n"
            text += "    <desc>\(WebText.html(description))</desc>\n"
            text += "    <trkseg>\n"
            for point in points {
                text +=
                    "      <trkpt lat=\"\(GeoPoint.degrees(point.latitude))\" lon=\"\(GeoPoint.degrees(point.longitude))\"/>\n"
            }
            text += "    </trkseg>\n  </trk>\n"
        }
        track(name, summary, points)
        if shortest {
            let figures = "\(Int(shortestLength.rounded())) m, exposure \(Int(shortestExposure.rounded())) µg/m³·m"
            track("Shortest path", figures, shortestPoints)
        }
        return text + "</gpx>\n"
    }

    /// One line for a person: what the route costs beside the shortest.
    public var summary: String {
        var text = "\(Int(length.rounded())) m, exposure \(Int(exposure.rounded())) µg/m³·m; shortest "
        text += "\(Int(shortestLength.rounded())) m, exposure \(Int(shortestExposure.rounded())) µg/m³·m"
        if defaultedCells > 0 {
            text += "; \(defaultedCells) cells without data counted at \(ParticulateReading.trim(defaultValue)) µg/m³"
        }
        return text
    }

    /// A LineString's positions: a route of one point repeats it, since a LineString needs two.
    private static func line(_ points: [GeoPoint]) -> [GeoPoint] { points.count == 1 ? points + points : points }

    private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
