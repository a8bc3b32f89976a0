import Foundation

/// A synthetic city for the route tests that go through the history: a square 2 km wide around Utrecht, measured in
/// metres east (x) and north (y) of its centre, with PM2.5 readings every 50 m at 5 µg/m³ and a hotspot of
/// 150 µg/m³ within 200 m of the centre, on the straight line from `start` to `end`.
public enum RouteFixtures {
    public static let origin = (latitude: 52.09, longitude: 5.12)
    /// 800 m west and east of the centre.
    public static let start = place(-800, 0)
    public static let end = place(800, 0)

    /// The point x m east and y m north of the centre (the equirectangular projection around it, R = 6,371,008.8 m).
    public static func place(_ x: Double, _ y: Double) -> (latitude: Double, longitude: Double) {
        let radius = 6_371_008.8
        let latitude = origin.latitude + y / radius * 180 / .pi
        let longitude = origin.longitude + x / (radius * cos(origin.latitude * .pi / 180)) * 180 / .pi
        return (latitude, longitude)
    }

    /// `52.09,5.108…` as `--from` and `from=` take it.
    public static func text(_ point: (latitude: Double, longitude: Double)) -> String {
        "\(point.latitude),\(point.longitude)"
    }

    /// 41 × 41 readings, 1,681 in all; 49 of them in the hotspot.
    public static func hotspot() -> [(latitude: Double, longitude: Double, pm25: Double)] {
        var readings: [(latitude: Double, longitude: Double, pm25: Double)] = []
        for i in -20...20 {
            for j in -20...20 {
                let (x, y) = (Double(i) * 50, Double(j) * 50)
                let point = place(x, y)
                readings.append((point.latitude, point.longitude, (x * x + y * y).squareRoot() <= 200 ? 150 : 5))
            }
        }
        return readings
    }

    /// Streets every `spacing` metres east–west and north–south from −extent to extent, shifted `east` metres: a
    /// GeoJSON FeatureCollection of LineStrings sharing their crossings.
    public static func streetGrid(spacing: Double = 200, extent: Double = 1000, east: Double = 0) -> String {
        let steps = Array(stride(from: -extent, through: extent, by: spacing))
        func line(_ points: [(latitude: Double, longitude: Double)]) -> String {
            let positions = points.map { "[\($0.longitude),\($0.latitude)]" }.joined(separator: ",")
            return #"{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[\#(positions)]}}"#
        }
        var features: [String] = []
        for fixed in steps {
            features.append(line(steps.map { place($0 + east, fixed) }))
            features.append(line(steps.map { place(fixed + east, $0) }))
        }
        return #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
    }
}
