import Foundation

/// A calendar date in the proleptic Gregorian calendar, without a time zone: "the day" at a place.
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// `nil` unless the numbers make a real date (years 1…9999): the day must survive the round trip through days.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = Timestamp.days(fromCivil: Int64(year), Int64(month), Int64(day))
        guard Timestamp.civil(fromDays: days) == (Int64(year), Int64(month), Int64(day)) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// `2024-06-21`: exactly four, two and two digits.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The date in UTC, shifted by `offset` seconds (a time zone's offset, or a longitude's 240 s a degree).
    public init(_ date: Date, offset: Double = 0) {
        let days = Int64(((date.timeIntervalSince1970 + offset) / 86_400).rounded(.down))
        let civil = Timestamp.civil(fromDays: days)
        (year, month, day) = (Int(civil.year), Int(civil.month), Int(civil.day))
    }

    /// Days since 1970-01-01.
    public var daysSince1970: Int { Int(Timestamp.days(fromCivil: Int64(year), Int64(month), Int64(day))) }

    /// 0h UTC of this date.
    public var startUTC: Date { Date(timeIntervalSince1970: Double(daysSince1970) * 86_400) }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool { lhs.daysSince1970 < rhs.daysSince1970 }
}

/// Solar noon, sunrise and sunset at a place on a date (NOAA's algorithm; see `SolarCoordinates`).
///
/// The date is the place's own: its solar noon is the one near 12:00 − 4 min × longitude UTC on that date, so at
/// 170° W it falls late in the UTC day and at 170° E early in it.
public struct SolarDay: Sendable, Hashable {
    /// The zenith angle of sunrise and sunset: 90° plus 34′ of refraction at the horizon and the Sun's 16′ radius
    /// (the upper limb touches the horizon), as NOAA uses.
    public static let sunriseZenith = 90.833

    /// Whether the Sun rises and sets that day.
    public enum Daylight: Sendable, Hashable {
        case risesAndSets(sunrise: Date, sunset: Date)
        /// The Sun's upper limb stays above the horizon all day (midnight sun).
        case polarDay
        /// It stays below all day.
        case polarNight
    }

    public let place: GeoPoint
    public let day: CalendarDay
    /// The instant of the Sun's transit (hour angle 0), found by iterating the equation of time to within a second.
    public let solarNoon: Date
    public let daylight: Daylight

    public init(place: GeoPoint, day: CalendarDay) {
        self.place = place
        self.day = day
        let start = day.startUTC
        func at(_ minutes: Double) -> SolarCoordinates { SolarCoordinates(start.addingTimeInterval(minutes * 60)) }

        // Noon = 720 − 4·longitude − EoT minutes after 0h UTC, with EoT taken at noon itself.
        var noon = 720 - 4 * place.longitude
        for _ in 0..<10 {
            let next = 720 - 4 * place.longitude - at(noon).equationOfTime
            defer { noon = next }
            if abs(next - noon) < 0.1 / 60 { break }
        }
        solarNoon = start.addingTimeInterval(noon * 60)

        // Sunrise (sign +1) or sunset (−1): the hour angle at which the zenith is 90.833°, iterated with the Sun's
        // declination and equation of time at the event itself. `nil` plus which polar case when there is none.
        func crossing(_ sign: Double) -> (minutes: Double?, daylight: Daylight?) {
            var minutes = noon
            for _ in 0..<6 {
                let sun = at(minutes)
                let latitude = place.latitude
                let cosine =
                    Angle.cos(Self.sunriseZenith) / (Angle.cos(latitude) * Angle.cos(sun.declination))
                    - Angle.tan(latitude) * Angle.tan(sun.declination)
                if cosine.isNaN || cosine > 1 { return (nil, .polarNight) }
                if cosine < -1 { return (nil, .polarDay) }
                let hourAngle = Angle.acos(cosine)
                let next = 720 - 4 * (place.longitude + sign * hourAngle) - sun.equationOfTime
                defer { minutes = next }
                if abs(next - minutes) < 0.1 / 60 { break }
            }
            return (minutes, nil)
        }
        let rise = crossing(1)
        let set = crossing(-1)
        if let sunrise = rise.minutes, let sunset = set.minutes {
            daylight = .risesAndSets(
                sunrise: start.addingTimeInterval(sunrise * 60), sunset: start.addingTimeInterval(sunset * 60))
        } else {
            daylight = rise.daylight ?? set.daylight ?? .polarNight
        }
    }

    /// The Sun's position at solar noon: the day's smallest zenith angle.
    public var noonPosition: SolarPosition { SolarPosition(place: place, date: solarNoon) }
}
