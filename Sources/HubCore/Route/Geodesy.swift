import Foundation

/// Distances on the Earth for routes of a few kilometres: the great-circle distance, and a flat local projection.
public enum Geodesy {
    /// The mean Earth radius R₁ = (2a + b) / 3 of WGS 84, in metres (Moritz, "Geodetic Reference System 1980",
    /// Bulletin Géodésique 54, 1980; the value the IUGG recommends for a spherical Earth).
    public static let earthRadius = 6_371_008.8

    /// The great-circle distance in metres by the haversine formula (R. W. Sinnott, "Virtues of the Haversine",
    /// Sky and Telescope 68(2), 1984, p. 159): a = sin²(Δφ/2) + cos φ₁ cos φ₂ sin²(Δλ/2), d = 2R asin(√a).
    /// Well conditioned for short distances, where the spherical law of cosines loses digits.
    public static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let φ1 = radians(a.latitude)
        let φ2 = radians(b.latitude)
        let Δφ = φ2 - φ1
        let Δλ = radians(b.longitude - a.longitude)
        let s = sin(Δφ / 2)
        let t = sin(Δλ / 2)
        let h = min(1, s * s + cos(φ1) * cos(φ2) * t * t)
        return 2 * earthRadius * asin(h.squareRoot())
    }

    /// The midpoint as the seed took it: the mean of the latitudes and of the longitudes. Within the few kilometres
    /// a walk covers this is metres from the great-circle midpoint; it is not meant for routes across the antimeridian.
    public static func midpoint(_ a: GeoPoint, _ b: GeoPoint) -> GeoPoint {
        GeoPoint(latitude: (a.latitude + b.latitude) / 2, longitude: (a.longitude + b.longitude) / 2)!
    }

    static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}

/// The equirectangular projection around an origin: x = R Δλ cos φ₀, y = R Δφ, in metres.
///
/// The plate carrée with its standard parallel at the origin (J. P. Snyder, *Map Projections — A Working Manual*,
/// USGS Professional Paper 1395, 1987, ch. 12, eqs. 12-1 and 12-2). Across a city-sized area (±10 km at mid
/// latitudes) its distances stay within about 0.1 % of the haversine's, which is what a pollution grid needs.
public struct LocalProjection: Sendable, Hashable {
    public let origin: GeoPoint
    /// cos φ₀: how much a degree of longitude shrinks at the origin's latitude.
    private let cosLatitude: Double

    public init(origin: GeoPoint) {
        self.origin = origin
        cosLatitude = cos(Geodesy.radians(origin.latitude))
    }

    /// Metres east (x) and north (y) of the origin.
    public func project(_ point: GeoPoint) -> (x: Double, y: Double) {
        let x = Geodesy.earthRadius * Geodesy.radians(point.longitude - origin.longitude) * cosLatitude
        let y = Geodesy.earthRadius * Geodesy.radians(point.latitude - origin.latitude)
        return (x, y)
    }

    /// The point `x` metres east and `y` metres north of the origin; `nil` off the globe.
    public func unproject(x: Double, y: Double) -> GeoPoint? {
        let latitude = origin.latitude + Geodesy.degrees(y / Geodesy.earthRadius)
        let longitude = origin.longitude + Geodesy.degrees(x / (Geodesy.earthRadius * cosLatitude))
        return GeoPoint(latitude: latitude, longitude: longitude)
    }
}

/// A latitude/longitude box (not across the antimeridian).
public struct GeoBoundingBox: Sendable, Hashable {
    public var south: Double
    public var west: Double
    public var north: Double
    public var east: Double

    public init(south: Double, west: Double, north: Double, east: Double) {
        self.south = south
        self.west = west
        self.north = north
        self.east = east
    }

    /// The smallest box holding every point; `nil` for none.
    public init?(around points: some Sequence<GeoPoint>) {
        var iterator = points.makeIterator()
        guard let first = iterator.next() else { return nil }
        self.init(south: first.latitude, west: first.longitude, north: first.latitude, east: first.longitude)
        while let point = iterator.next() {
            south = min(south, point.latitude)
            north = max(north, point.latitude)
            west = min(west, point.longitude)
            east = max(east, point.longitude)
        }
    }

    public var centre: GeoPoint {
        GeoPoint(latitude: (south + north) / 2, longitude: (west + east) / 2)!
    }

    public func contains(_ point: GeoPoint) -> Bool {
        (south...north).contains(point.latitude) && (west...east).contains(point.longitude)
    }
}

/// The seed's selection rule: the circle around the midpoint of start and end whose radius is half their distance,
/// widened by a margin, so that a detour has readings to go through.
public struct RouteArea: Sendable, Hashable {
    public let centre: GeoPoint
    /// Metres: half the great-circle distance from start to end, plus the margin.
    public let radius: Double

    /// - Parameter margin: metres added to the radius (the seed used none: a route then can't bend far).
    public init(start: GeoPoint, end: GeoPoint, margin: Double = 0) {
        centre = Geodesy.midpoint(start, end)
        // Measured from the centre, not half of start–end: with the mean midpoint the two differ by centimetres,
        // and this way both ends are always inside.
        radius = max(Geodesy.distance(centre, start), Geodesy.distance(centre, end)) + max(0, margin)
    }

    /// Whether a point lies in the circle, in metres (the seed compared degrees, which is wrong away from the equator).
    public func contains(_ point: GeoPoint) -> Bool { Geodesy.distance(centre, point) <= radius }

    /// The readings the route is planned on.
    public func select(_ readings: [PollutionReading]) -> [PollutionReading] { readings.filter { contains($0.point) } }

    /// The box around the circle, with a metre to spare so that both ends fall inside despite rounding.
    public var boundingBox: GeoBoundingBox {
        let r = radius + 1
        let dLat = Geodesy.degrees(r / Geodesy.earthRadius)
        let dLon = Geodesy.degrees(r / (Geodesy.earthRadius * max(1e-9, cos(Geodesy.radians(centre.latitude)))))
        return GeoBoundingBox(
            south: max(-90, centre.latitude - dLat), west: max(-180, centre.longitude - dLon),
            north: min(90, centre.latitude + dLat), east: min(180, centre.longitude + dLon))
    }
}
