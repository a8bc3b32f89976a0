import Foundation

/// Raster map tiles drawn under the dashboard's maps (a session's track, a route): the "slippy map" scheme
/// OpenStreetMap's and most tile servers use — Web Mercator, 256-pixel squares, `{z}/{x}/{y}`, 2^z tiles a side at
/// zoom z, x from 180° W eastwards and y from 85.05° N southwards.
///
/// The browser fetches them, not hubd (OpenStreetMap's tile policy asks for a browser's own requests with their
/// Referer, and against caches in front of it); a map whose tiles do not load is still drawn, on a plain ground.
public struct MapTiles: Sendable, Hashable {
    /// `https://tile.openstreetmap.org/{z}/{x}/{y}.png`: the URL OpenStreetMap's policy names.
    public static let openStreetMap = MapTiles(
        checking: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", attribution: "© OpenStreetMap contributors")!

    /// A URL with `{z}`, `{x}` and `{y}`.
    public let template: String
    /// What the map says it is made from (a tile server's licence asks for it).
    public let attribution: String
    /// `scheme://host[:port]`: what the pages' Content-Security-Policy lets images come from.
    public let origin: String

    /// The zooms a tile server serves; OpenStreetMap's stops at 19.
    public static let zooms = 0...19

    /// `nil` unless `template` is an http or https URL with a host and each of `{z}`, `{x}` and `{y}`.
    public init?(checking template: String, attribution: String) {
        guard ["{z}", "{x}", "{y}"].allSatisfy(template.contains),
            let scheme = template.range(of: "://"), ["http", "https"].contains(template[..<scheme.lowerBound])
        else { return nil }
        let rest = template[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" }
        guard !authority.isEmpty, !authority.contains("{"), !authority.contains("@"),
            !template.contains(where: { $0 == "\"" || $0 == "<" || $0 == ">" || $0 == " " || $0 == "'" })
        else { return nil }
        self.template = template
        self.attribution = attribution
        self.origin = String(template[..<scheme.upperBound] + authority)
    }

    /// What a bad `map_tiles` is told.
    public static let expected =
        "a URL of tiles with {z}, {x} and {y} (like https://tile.openstreetmap.org/{z}/{x}/{y}.png), or off"

    /// The tile's URL.
    public func url(zoom: Int, x: Int, y: Int) -> String {
        template.replacingOccurrences(of: "{z}", with: String(zoom))
            .replacingOccurrences(of: "{x}", with: String(x)).replacingOccurrences(of: "{y}", with: String(y))
    }

    /// Where a point is in tiles at `zoom` (fractions within the tile): Web Mercator.
    public static func tile(of point: GeoPoint, zoom: Int) -> (x: Double, y: Double) {
        let side = pow(2, Double(zoom))
        let latitude = min(max(point.latitude, -85.0511), 85.0511) * .pi / 180
        let x = (point.longitude + 180) / 360 * side
        let y = (1 - log(tan(latitude) + 1 / cos(latitude)) / .pi) / 2 * side
        return (x, y)
    }

    /// The north-west corner of tile (x, y) at `zoom` (x and y may be one past the last, for the south-east corner
    /// of the last tile).
    public static func corner(x: Int, y: Int, zoom: Int) -> GeoPoint {
        let side = pow(2, Double(zoom))
        let longitude = Double(x) / side * 360 - 180
        let latitude = atan(sinh(.pi * (1 - 2 * Double(y) / side))) * 180 / .pi
        return GeoPoint(latitude: latitude, longitude: longitude)!
    }

    /// The zoom whose tiles, drawn at `pixelsPerMetre`, come nearest their own 256 pixels (between 181 and 362
    /// pixels a tile), within `zooms`. A tile is 40,075 km × cos φ / 2^z wide.
    public static func zoom(pixelsPerMetre: Double, latitude: Double) -> Int {
        let metresPerPixelAtZero = 40_075_016.686 * cos(latitude * .pi / 180) / 256
        let zoom = log2(metresPerPixelAtZero * pixelsPerMetre).rounded()
        guard zoom.isFinite else { return zooms.upperBound }
        return min(max(Int(zoom), zooms.lowerBound), zooms.upperBound)
    }
}
