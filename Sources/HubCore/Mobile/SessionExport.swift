import Foundation
import HubSupport

/// A session's readings in the formats people load elsewhere: GPX 1.1 for maps and GPS tools, GeoJSON (RFC 7946)
/// for GIS and web maps, CSV for spreadsheets. Times in UTC, ISO 8601; coordinates with seven decimals.
public struct SessionExport: Sendable {
    public var summary: SessionSummary
    public var points: [TrackPoint]

    public init(summary: SessionSummary, points: [TrackPoint]) {
        self.summary = summary
        self.points = points
    }

    /// One `trk` of one `trkseg`: a `trkpt` per positioned reading, with its elevation and time, and what it
    /// measured in `extensions` (`<sensorhub:pm25>` in the hub's namespace, which GPX 1.1 allows and readers
    /// that don't know it skip).
    public func gpx(creator: String = "SensorHub") -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text += "<gpx version=\"1.1\" creator=\"\(WebText.html(creator))\""
        text += " xmlns=\"http://www.topografix.com/GPX/1/1\" xmlns:sensorhub=\"https://sensorhub.invalid/gpx/1\">\n"
        text += "  <trk>\n    <name>\(WebText.html("\(summary.sensor) \(summary.started)"))</name>\n"
        text += "    <desc>\(WebText.html("session \(summary.id)"))</desc>\n    <trkseg>\n"
        for point in points {
            guard let fix = point.position else { continue }
            text += "      <trkpt lat=\"\(GeoPoint.degrees(fix.latitude))\" lon=\"\(GeoPoint.degrees(fix.longitude))\">"
            if let altitude = fix.altitude { text += "<ele>\(Self.number(altitude))</ele>" }
            text += "<time>\(point.time)</time>"
            let measured = Self.measured(point)
            if !measured.isEmpty {
                text += "<extensions>"
                for (name, value) in measured { text += "<sensorhub:\(name)>\(Self.number(value))</sensorhub:\(name)>" }
                text += "</extensions>"
            }
            text += "</trkpt>\n"
        }
        text += "    </trkseg>\n  </trk>\n</gpx>\n"
        return text
    }

    /// A FeatureCollection: the track as a LineString (when it has two positions or more) with the session's
    /// id, sensor and times, then each positioned reading as a Point with its time and values.
    public func geoJSON() -> String {
        var json = JSONWriter(compact: true)
        json.raw("{\"type\":\"FeatureCollection\",\"features\":[")
        let positioned = points.filter { $0.position != nil }
        var firstFeature = true
        func separator() {
            if !firstFeature { json.raw(",") }
            firstFeature = false
        }
        if positioned.count >= 2 {
            separator()
            json.raw("{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[")
            for (index, point) in positioned.enumerated() {
                if index > 0 { json.raw(",") }
                json.raw(Self.coordinates(point.position!))
            }
            json.raw("]},\"properties\":{")
            var first = true
            json.key("session", first: &first)
            json.string(summary.id)
            json.key("sensor", first: &first)
            json.string(summary.sensor)
            json.key("started", first: &first)
            json.timestamp(summary.started)
            if let ended = summary.ended {
                json.key("ended", first: &first)
                json.timestamp(ended)
            }
            json.raw("}}")
        }
        for point in positioned {
            separator()
            json.raw("{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":")
            json.raw(Self.coordinates(point.position!))
            json.raw("},\"properties\":{")
            var first = true
            json.key("time", first: &first)
            json.timestamp(point.time)
            for (name, value) in Self.measured(point) {
                json.key(name, first: &first)
                json.number(value)
            }
            if let accuracy = point.position?.accuracy {
                json.key("accuracy", first: &first)
                json.number(accuracy)
            }
            json.raw("}}")
        }
        json.raw("]}")
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// `time,lat,lon,alt,accuracy,pm25,pm10,value`, a row per reading (positioned or not), empty where missing.
    public func csv() -> String {
        var text = "time,lat,lon,alt,accuracy,pm25,pm10,value\n"
        for point in points {
            let fix = point.position
            let fields: [String] = [
                point.time.description,
                fix.map { GeoPoint.degrees($0.latitude) } ?? "", fix.map { GeoPoint.degrees($0.longitude) } ?? "",
                fix?.altitude.map(Self.number) ?? "", fix?.accuracy.map(Self.number) ?? "",
                point.pm25.map(Self.number) ?? "", point.pm10.map(Self.number) ?? "",
                point.value.map(Self.number) ?? "",
            ]
            text += fields.joined(separator: ",") + "\n"
        }
        return text
    }

    private static func measured(_ point: TrackPoint) -> [(String, Double)] {
        [("pm25", point.pm25), ("pm10", point.pm10), ("value", point.value)].compactMap { name, value in
            value.map { (name, $0) }
        }
    }

    /// `[longitude,latitude]` or `[longitude,latitude,altitude]`, as RFC 7946 orders them.
    private static func coordinates(_ fix: GeoFix) -> String {
        var text = "[\(GeoPoint.degrees(fix.longitude)),\(GeoPoint.degrees(fix.latitude))"
        if let altitude = fix.altitude { text += ",\(number(altitude))" }
        return text + "]"
    }

    /// As short as it is exact, to three decimals.
    private static func number(_ value: Double) -> String { ParticulateReading.trim((value * 1000).rounded() / 1000) }
}

extension GeoPoint {
    /// A coordinate in degrees with seven decimals: about a centimetre, as much as a GPS fix holds.
    package static func degrees(_ value: Double) -> String { String(format: "%.7f", value) }
}
