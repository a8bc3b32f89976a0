import Foundation

/// A place on the Earth, in degrees: latitude north positive (−90…90), longitude east positive (−180…180).
public struct GeoPoint: Sendable, Hashable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    /// `nil` when either coordinate is out of its range or not a number.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// `52.1000° N, 5.1800° E`.
    public var description: String {
        let north = String(format: "%.4f° %@", abs(latitude), latitude < 0 ? "S" : "N")
        let east = String(format: "%.4f° %@", abs(longitude), longitude < 0 ? "W" : "E")
        return north + ", " + east
    }
}

/// The Sun's place on the sky at one instant, seen from the centre of the Earth.
///
/// NOAA's solar position algorithm, as in its spreadsheet "General Solar Position Calculations" (NOAA Global
/// Monitoring Laboratory's solar calculator), which follows Jean Meeus, *Astronomical Algorithms* (2nd ed.,
/// Willmann-Bell 1998), chapters 25 (the Sun's low-accuracy position) and 28 (equation of time, Smart's formula
/// 28.3). NOAA states its accuracy as well under a minute for sunrise, sunset and noon between 1800 and 2100 within
/// ±72° latitude. The time is taken as UT directly: like NOAA, the difference TD − UT (about a minute today) is
/// ignored; it moves the Sun by under 0.001°.
///
/// Every angle is in degrees, computed in `Double` (single precision drifts).
public struct SolarCoordinates: Sendable, Hashable {
    /// The Julian day of the instant (days since −4712 January 1, 12h).
    public let julianDay: Double
    /// Julian centuries of 36,525 days since J2000.0.
    public let julianCentury: Double
    /// The Sun's geometric mean longitude L₀, 0…360.
    public let geometricMeanLongitude: Double
    /// The Sun's mean anomaly M, 0…360.
    public let meanAnomaly: Double
    /// The eccentricity of the Earth's orbit e.
    public let eccentricity: Double
    /// The equation of centre C.
    public let equationOfCentre: Double
    /// The Sun's true longitude ☉ = L₀ + C.
    public let trueLongitude: Double
    /// The apparent longitude λ: corrected for nutation and aberration.
    public let apparentLongitude: Double
    /// The mean obliquity of the ecliptic ε₀ (Meeus 22.2).
    public let meanObliquity: Double
    /// The obliquity corrected for nutation, ε.
    public let obliquity: Double
    /// The apparent right ascension α, 0…360.
    public let rightAscension: Double
    /// The apparent declination δ.
    public let declination: Double
    /// The equation of time in minutes: apparent minus mean solar time.
    public let equationOfTime: Double

    /// The Julian day of a `Date` (the Unix epoch is JD 2440587.5).
    public static func julianDay(_ date: Date) -> Double {
        date.timeIntervalSince1970 / 86_400 + 2_440_587.5
    }

    public init(_ date: Date) {
        self.init(julianDay: Self.julianDay(date))
    }

    public init(julianDay: Double) {
        self.julianDay = julianDay
        let t = (julianDay - 2_451_545) / 36_525
        julianCentury = t
        let l0 = Angle.normalized(280.46646 + t * (36_000.76983 + t * 0.0003032))
        geometricMeanLongitude = l0
        let m = 357.52911 + t * (35_999.05029 - 0.0001537 * t)
        meanAnomaly = Angle.normalized(m)
        let e = 0.016708634 - t * (0.000042037 + 0.0000001267 * t)
        eccentricity = e
        let c =
            Angle.sin(m) * (1.914602 - t * (0.004817 + 0.000014 * t)) + Angle.sin(2 * m) * (0.019993 - 0.000101 * t)
            + Angle.sin(3 * m) * 0.000289
        equationOfCentre = c
        trueLongitude = l0 + c
        // Ω, the longitude of the Moon's ascending node, drives the nutation terms of λ and ε.
        let omega = 125.04 - 1934.136 * t
        let lambda = trueLongitude - 0.00569 - 0.00478 * Angle.sin(omega)
        apparentLongitude = lambda
        let epsilon0 = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60
        meanObliquity = epsilon0
        let epsilon = epsilon0 + 0.00256 * Angle.cos(omega)
        obliquity = epsilon
        rightAscension = Angle.normalized(
            Angle.atan2(Angle.cos(epsilon) * Angle.sin(lambda), Angle.cos(lambda)))
        declination = Angle.asin(Angle.sin(epsilon) * Angle.sin(lambda))
        let y = pow(Angle.tan(epsilon / 2), 2)
        let radians =
            y * Angle.sin(2 * l0) - 2 * e * Angle.sin(m) + 4 * e * y * Angle.sin(m) * Angle.cos(2 * l0)
            - 0.5 * y * y * Angle.sin(4 * l0) - 1.25 * e * e * Angle.sin(2 * m)
        equationOfTime = 4 * radians * 180 / .pi
    }
}

/// Where the Sun stands for an observer at a place and a UTC instant (NOAA's algorithm; see `SolarCoordinates`).
public struct SolarPosition: Sendable, Hashable {
    public let place: GeoPoint
    public let date: Date
    public let sun: SolarCoordinates
    /// The hour angle, −180…180: negative before solar noon, 0 at it.
    public let hourAngle: Double
    /// The geometric zenith angle, 0…180: what the UV index takes (no refraction).
    public let zenith: Double
    /// The azimuth, clockwise from north, 0…360.
    public let azimuth: Double

    public init(place: GeoPoint, date: Date) {
        self.place = place
        self.date = date
        let sun = SolarCoordinates(date)
        self.sun = sun
        let minutes = date.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) / 60
        let trueSolarTime = (minutes + sun.equationOfTime + 4 * place.longitude)
            .positiveRemainder(1440)
        hourAngle = trueSolarTime / 4 < 0 ? trueSolarTime / 4 + 180 : trueSolarTime / 4 - 180
        let latitude = place.latitude
        let cosine =
            Angle.sin(latitude) * Angle.sin(sun.declination)
            + Angle.cos(latitude) * Angle.cos(sun.declination) * Angle.cos(hourAngle)
        zenith = Angle.acos(cosine.clamped(-1, 1))
        let denominator = Angle.cos(latitude) * Angle.sin(zenith)
        if abs(denominator) < 1e-12 {
            // At a pole or with the Sun in the zenith the azimuth is undefined: say south (north in the south).
            azimuth = latitude >= 0 ? 180 : 0
        } else {
            let a = Angle.acos(
                ((Angle.sin(latitude) * Angle.cos(zenith) - Angle.sin(sun.declination)) / denominator).clamped(-1, 1))
            azimuth = hourAngle > 0 ? (a + 180).positiveRemainder(360) : (540 - a).positiveRemainder(360)
        }
    }

    /// The Sun's elevation above the horizon without refraction: 90° − zenith.
    public var elevation: Double { 90 - zenith }

    /// The zenith angle as seen through the air: the geometric zenith less NOAA's approximation of atmospheric
    /// refraction (its spreadsheet's piecewise formula, for a standard atmosphere at sea level).
    public var apparentZenith: Double { zenith - Self.refraction(elevation: elevation) }

    /// NOAA's atmospheric refraction in degrees for a geometric elevation in degrees.
    public static func refraction(elevation: Double) -> Double {
        let arcseconds: Double
        if elevation > 85 {
            arcseconds = 0
        } else if elevation > 5 {
            let t = Angle.tan(elevation)
            arcseconds = 58.1 / t - 0.07 / pow(t, 3) + 0.000086 / pow(t, 5)
        } else if elevation > -0.575 {
            let e = elevation
            arcseconds = 1735 + e * (-518.2 + e * (103.4 + e * (-12.79 + e * 0.711)))
        } else {
            arcseconds = -20.772 / Angle.tan(elevation)
        }
        return arcseconds / 3600
    }
}

/// Trigonometry in degrees, and the small helpers the solar code needs.
enum Angle {
    static let radians = Double.pi / 180
    static func sin(_ degrees: Double) -> Double { Foundation.sin(degrees * radians) }
    static func cos(_ degrees: Double) -> Double { Foundation.cos(degrees * radians) }
    static func tan(_ degrees: Double) -> Double { Foundation.tan(degrees * radians) }
    static func asin(_ value: Double) -> Double { Foundation.asin(value) / radians }
    static func acos(_ value: Double) -> Double { Foundation.acos(value) / radians }
    static func atan2(_ y: Double, _ x: Double) -> Double { Foundation.atan2(y, x) / radians }
    /// 0…360.
    static func normalized(_ degrees: Double) -> Double { degrees.positiveRemainder(360) }
}

extension Double {
    /// The remainder in 0..<divisor, also for negative values.
    func positiveRemainder(_ divisor: Double) -> Double {
        let r = truncatingRemainder(dividingBy: divisor)
        return r < 0 ? r + divisor : r
    }

    func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(Swift.max(self, low), high) }
}
