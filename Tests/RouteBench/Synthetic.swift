import Foundation
import HubCore

/// SplitMix64 (G. Steele, D. Lea and C. Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): the
/// same seed gives the same city, readings, roads and pairs on every run and machine.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A square city around Utrecht, `side` metres wide, in metres east and north of its centre.
struct City {
    let side: Double
    let projection = LocalProjection(origin: GeoPoint(latitude: 52.09, longitude: 5.12)!)

    var box: GeoBoundingBox {
        let half = side / 2
        let southWest = point(-half, -half)
        let northEast = point(half, half)
        return GeoBoundingBox(
            south: southWest.latitude, west: southWest.longitude, north: northEast.latitude,
            east: northEast.longitude)
    }

    func point(_ x: Double, _ y: Double) -> GeoPoint { projection.unproject(x: x, y: y)! }

    /// PM2.5 readings as a city's would look: fixed and mobile sensors on a jittered lattice every `spacing` metres
    /// over a background of 5–11 µg/m³ that varies across town, plus `hotspots` plumes (40–150 µg/m³ at the centre,
    /// Gaussian, σ 300–1,500 m); and `gaps` districts of 1–2 km radius with no readings at all, whose cells the
    /// field counts at its default.
    func readings(spacing: Double, hotspots: Int, gaps: Int, random: inout SeededRandom) -> [PollutionReading] {
        let half = side / 2
        let plumes = (0..<hotspots).map { _ in
            (
                x: Double.random(in: -half...half, using: &random), y: Double.random(in: -half...half, using: &random),
                peak: Double.random(in: 40...150, using: &random), sigma: Double.random(in: 300...1500, using: &random)
            )
        }
        let holes = (0..<gaps).map { _ in
            (
                x: Double.random(in: -half...half, using: &random), y: Double.random(in: -half...half, using: &random),
                radius: Double.random(in: 1000...2000, using: &random)
            )
        }
        var readings: [PollutionReading] = []
        let steps = Int(side / spacing)
        for i in 0..<steps {
            for j in 0..<steps {
                let x = -half + (Double(i) + 0.5) * spacing + Double.random(in: -0.3...0.3, using: &random) * spacing
                let y = -half + (Double(j) + 0.5) * spacing + Double.random(in: -0.3...0.3, using: &random) * spacing
                let noise = Double.random(in: -1...1, using: &random)
                guard !holes.contains(where: { hypot($0.x - x, $0.y - y) < $0.radius }) else { continue }
                var pm25 = 8 + 2 * sin(x / 3000) * cos(y / 4000) + noise
                for plume in plumes {
                    let d2 = (plume.x - x) * (plume.x - x) + (plume.y - y) * (plume.y - y)
                    pm25 += plume.peak * exp(-d2 / (2 * plume.sigma * plume.sigma))
                }
                readings.append(PollutionReading(point: point(x, y), pm25: pm25))
            }
        }
        return readings
    }

    /// A street grid as GeoJSON LineStrings, as an OpenStreetMap extract would give it: `count` × `count` crossings
    /// over the city, each moved by up to a quarter block; `missing` of the blocks' sides left out (a street then
    /// breaks into two LineStrings); `curved` of them bent through a shape point halfway (two edges); and `diagonal`
    /// of the blocks crossed corner to corner by a road of its own.
    func streets(
        count: Int, missing: Double, curved: Double, diagonal: Double, random: inout SeededRandom
    ) -> String {
        let spacing = side * 0.99 / Double(count - 1)
        let start = -side * 0.99 / 2
        var crossings: [[(x: Double, y: Double)]] = []
        for i in 0..<count {
            crossings.append(
                (0..<count).map { j in
                    (
                        x: start + Double(i) * spacing + Double.random(in: -0.25...0.25, using: &random) * spacing,
                        y: start + Double(j) * spacing + Double.random(in: -0.25...0.25, using: &random) * spacing
                    )
                })
        }
        var features: [String] = []
        // One street at a time, east–west then north–south, cut where a side is missing.
        for horizontal in [true, false] {
            for fixed in 0..<count {
                var run: [(x: Double, y: Double)] = []
                for step in 0..<count {
                    let here = horizontal ? crossings[step][fixed] : crossings[fixed][step]
                    if run.isEmpty {
                        run = [here]
                        continue
                    }
                    if Double.random(in: 0..<1, using: &random) < missing {
                        if run.count > 1 { features.append(feature(run)) }
                        run = [here]
                        continue
                    }
                    if Double.random(in: 0..<1, using: &random) < curved {
                        let last = run[run.count - 1]
                        let bend = Double.random(in: -0.15...0.15, using: &random) * spacing
                        let mid = (x: (last.x + here.x) / 2, y: (last.y + here.y) / 2)
                        run.append(horizontal ? (mid.x, mid.y + bend) : (mid.x + bend, mid.y))
                    }
                    run.append(here)
                }
                if run.count > 1 { features.append(feature(run)) }
            }
        }
        for i in 0..<(count - 1) {
            for j in 0..<(count - 1) where Double.random(in: 0..<1, using: &random) < diagonal {
                features.append(
                    Bool.random(using: &random)
                        ? feature([crossings[i][j], crossings[i + 1][j + 1]])
                        : feature([crossings[i + 1][j], crossings[i][j + 1]]))
            }
        }
        return "{\"type\":\"FeatureCollection\",\"features\":[\n" + features.joined(separator: ",\n") + "\n]}\n"
    }

    private func feature(_ points: [(x: Double, y: Double)]) -> String {
        let positions = points.map { position in
            let point = point(position.x, position.y)
            return "[\(Self.degrees(point.longitude)),\(Self.degrees(point.latitude))]"
        }
        return "{\"type\":\"Feature\",\"properties\":{\"highway\":\"residential\"},"
            + "\"geometry\":{\"type\":\"LineString\",\"coordinates\":[\(positions.joined(separator: ","))]}}"
    }

    /// Degrees to 7 decimals, as OpenStreetMap stores them; the same crossing always writes the same text.
    private static func degrees(_ value: Double) -> String {
        let scaled = Int64((value * 1e7).rounded())
        let whole = scaled.magnitude / 10_000_000
        let fraction = String(scaled.magnitude % 10_000_000)
        return (scaled < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: 7 - fraction.count) + fraction
    }
}
