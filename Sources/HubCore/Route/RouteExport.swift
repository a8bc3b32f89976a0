import Foundation
import HubSupport

extension Route {
    /// The route as a GeoJSON Feature (RFC 7946): a LineString of [longitude, latitude] positions, with
    /// `length_m`, `exposure`, `shortest_length_m`, `shortest_exposure`, `defaulted_cells` and `default_pm25` as
    /// properties. A zero-length route repeats its one point, since a LineString needs two positions. `readings`,
    /// when given, is the number of readings the pollution grid was made from.
    public func geoJSON(name: String? = nil, readings: Int? = nil) -> String {
        var json = JSONWriter(compact: true)
        var first = true
        json.raw("{")
        json.key("type", first: &first)
        json.string("Feature")
        json.key("geometry", first: &first)
        json.raw("{\"type\":\"LineString\",\"coordinates\":[")
        for (index, point) in linePoints.enumerated() {
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
        json.key("length_m", first: &inner)
        json.number(Self.rounded(length))
        json.key("exposure", first: &inner)
        json.number(Self.rounded(exposure))
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
        json.raw("}}")
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// The route as a GPX 1.1 track (one trk, one trkseg), with its name and creator escaped for XML.
    public func gpx(name: String = "Least-polluted route", creator: String = "SensorHub") -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text +=
            "<gpx version=\"1.1\" creator=\"\(WebText.html(creator))\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
        text += "  <trk>\n    <name>\(WebText.html(name))</name>\n"
        text += "    <desc>\(WebText.html(summary))</desc>\n"
        text += "    <trkseg>\n"
        for point in points {
            text +=
                "      <trkpt lat=\"\(GeoPoint.degrees(point.latitude))\" lon=\"\(GeoPoint.degrees(point.longitude))\"/>\n"
        }
        text += "    </trkseg>\n  </trk>\n</gpx>\n"
        return text
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

    private var linePoints: [GeoPoint] { points.count == 1 ? points + points : points }

    private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
