import ArgumentParser
import Foundation
import HubCore

extension HubctlCommand {
    /// `hubctl uv`: the Sun and the clear-sky UV index for a place and date, computed here (no hub, no network).
    struct UV: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "uv",
            abstract: "Print the clear-sky UV index for a place and date: solar noon, sunrise, sunset, sunburn times.",
            discussion: """
                Computed on this machine, without a running hub or the network: the Sun's position with NOAA's \
                solar position algorithm (after Meeus, Astronomical Algorithms), the clear-sky UV index with \
                Madronich's formula (2007) from the zenith angle and the ozone column, WHO's band of the index \
                rounded half up, minutes to sunburn (one MED) for Fitzpatrick skin types I-VI and minutes for a \
                standard vitamin D dose (1000 IU with face, hands and arms bare; Webb and Engelsen 2006). Clear \
                sky only: clouds, haze, snow and shade change all of it.

                The place is --lat/--lon, else uv.latitude/uv.longitude in hubd.yaml (whose uv.ozone and \
                uv.altitude then apply too). The date is the place's (--date, else today there); "now" is shown \
                when it is today. Ozone is --ozone, else uv.ozone, else 300 DU, a climatological value the output \
                names as such. Times are in UTC and in this machine's time zone.

                Examples:
                  hubctl uv --lat 52.1 --lon 5.18
                  hubctl uv --lat -33.87 --lon 151.21 --date 2024-12-21 --ozone 280
                  hubctl uv --json
                """)

        @Option(
            name: .customLong("lat"), parsing: .unconditional,
            help: ArgumentHelp("Latitude in degrees, north positive.", valueName: "deg"))
        var latitude: Double?
        @Option(
            name: .customLong("lon"), parsing: .unconditional,
            help: ArgumentHelp("Longitude in degrees, east positive.", valueName: "deg"))
        var longitude: Double?
        @Option(help: ArgumentHelp("The date at the place (default: today there).", valueName: "YYYY-MM-DD"))
        var date: String?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("The total ozone column in Dobson units (50 to 700).", valueName: "DU"))
        var ozone: Double?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Metres above sea level: about +10 % a kilometre (WHO).", valueName: "m"))
        var altitude: Double?
        @Option(
            help: ArgumentHelp(
                "hubd's configuration file, for uv: (default: $HUB_CONFIG, else /etc/sensorhub/hubd.yaml if it exists).",
                valueName: "path"))
        var config: String?
        @OptionGroup var clock: ClockOptions
        @Flag(help: "Print JSON, for scripts.") var json = false

        func validate() throws {
            if let latitude, !(latitude.isFinite && (-90...90).contains(latitude)) {
                throw ValidationError("--lat must be from -90 to 90 degrees (north positive), not \(latitude)")
            }
            if let longitude, !(longitude.isFinite && (-180...180).contains(longitude)) {
                throw ValidationError("--lon must be from -180 to 180 degrees (east positive), not \(longitude)")
            }
            if (latitude == nil) != (longitude == nil) {
                throw ValidationError("give --lat and --lon together")
            }
            if let date, CalendarDay(date) == nil {
                throw ValidationError("--date must be a real date written YYYY-MM-DD, not '\(date)'")
            }
            if let ozone, !UVIndex.plausibleOzone.contains(ozone) {
                throw ValidationError("--ozone must be from 50 to 700 DU, not \(ozone)")
            }
            if let altitude, !(altitude.isFinite && (-500...9000).contains(altitude)) {
                throw ValidationError("--altitude must be from -500 to 9000 metres, not \(altitude)")
            }
        }

        func run() async throws {
            let settings = try settings()
            let place: GeoPoint
            if let latitude, let longitude, let given = GeoPoint(latitude: latitude, longitude: longitude) {
                place = given
            } else if let configured = settings.place {
                place = configured
            } else {
                Failure.printError("give --lat and --lon (or uv.latitude and uv.longitude in hubd.yaml)")
                throw ExitCode(Failure.invalidInput)
            }
            let now = clock.current.date
            // "Today" at the place: its mean solar date (UTC shifted by 4 minutes a degree of longitude).
            let today = CalendarDay(now, offset: place.longitude * 240)
            let report = UVReport(
                place: place, day: date.flatMap(CalendarDay.init) ?? today, now: now, today: today,
                ozone: ozone ?? settings.ozone, altitude: altitude ?? settings.altitude)
            print(json ? report.json : report.text, terminator: "")
        }

        /// `uv:` from the configuration when no place is given (a broken file is an error then); with --lat/--lon
        /// the file is not read.
        private func settings() throws -> UVSettings {
            guard latitude == nil else { return UVSettings() }
            do {
                return try HubConfiguration.load(option: config).uv
            } catch {
                Failure.printError(error.description)
                throw ExitCode(Failure.badConfiguration)
            }
        }
    }
}

/// What `hubctl uv` prints: one place and date, worked out once.
struct UVReport {
    let place: GeoPoint
    let day: SolarDay
    /// The instant for "now" when the date is today at the place.
    let now: Date?
    let ozone: Double
    let ozoneIsDefault: Bool
    let altitude: Double
    let maximum: UVIndex

    init(place: GeoPoint, day: CalendarDay, now: Date, today: CalendarDay, ozone: Double?, altitude: Double) {
        self.place = place
        self.day = SolarDay(place: place, day: day)
        self.now = day == today ? now : nil
        self.ozone = ozone ?? UVIndex.climatologicalOzone
        ozoneIsDefault = ozone == nil
        self.altitude = altitude
        maximum = self.day.maximumUVIndex(ozone: self.ozone, altitude: altitude)
    }

    var current: (position: SolarPosition, index: UVIndex)? {
        now.map { now in
            let position = SolarPosition(place: place, date: now)
            return (position, UVIndex.clearSky(zenith: position.zenith, ozone: ozone, altitude: altitude))
        }
    }

    var text: String {
        var fields: [(String, String)] = [
            ("Place", place.description + (altitude != 0 ? String(format: ", %.0f m", altitude) : "")),
            ("Date", day.day.description),
            ("Solar noon", Self.time(day.solarNoon)),
        ]
        switch day.daylight {
        case .risesAndSets(let sunrise, let sunset):
            fields += [("Sunrise", Self.time(sunrise)), ("Sunset", Self.time(sunset))]
        case .polarDay: fields.append(("Sunrise", "none: the Sun stays up all day (polar day)"))
        case .polarNight: fields.append(("Sunrise", "none: the Sun stays down all day (polar night)"))
        }
        fields.append(
            (
                "Ozone",
                String(format: "%.1f DU", ozone)
                    + (ozoneIsDefault ? " (climatological default; --ozone sets the day's)" : "")
            ))
        if let current, let now {
            fields.append(
                (
                    "UV index now",
                    "\(current.index) (\(current.index.band)) at \(Self.time(now)), zenith "
                        + String(format: "%.1f°", current.position.zenith)
                ))
        }
        fields.append(
            (
                "UV index max",
                "\(maximum) (\(maximum.band)) at solar noon, zenith " + String(format: "%.1f°", day.noonPosition.zenith)
            ))
        var text = Output.aligned(fields).map { $0 + "\n" }.joined()
        guard maximum.value > 0 else { return text + "No UV: the Sun does not rise above the horizon.\n" }
        text += "\nAt the maximum, clear sky, unprotected (MED per Fitzpatrick skin type):\n"
        let rows = SkinType.allCases.map { skin in
            [
                skin.description, String(format: "%.0f J/m²", skin.minimalErythemalDose),
                Self.minutes(maximum.minutesToErythema(skin)), Self.minutes(maximum.minutesForVitaminD(skin)),
            ]
        }
        text += Output.table(header: ["SKIN TYPE", "MED", "SUNBURN", "VITAMIN D"], rows: rows)
        text += "Vitamin D: 1000 IU with face, hands and arms bare (Webb & Engelsen 2006); a rough guide.\n"
        return text
    }

    var json: String {
        var object: [String: Any] = [
            "latitude": place.latitude, "longitude": place.longitude, "date": day.day.description,
            "solarNoon": Self.iso(day.solarNoon), "ozone": ozone, "ozoneIsDefault": ozoneIsDefault,
            "altitude": altitude, "maximum": Self.rounded(maximum.value), "maximumBand": maximum.band.rawValue,
            "noonZenith": Self.rounded(day.noonPosition.zenith),
        ]
        switch day.daylight {
        case .risesAndSets(let sunrise, let sunset):
            object["sunrise"] = Self.iso(sunrise)
            object["sunset"] = Self.iso(sunset)
        case .polarDay: object["polar"] = "day"
        case .polarNight: object["polar"] = "night"
        }
        if let current, let now {
            object["now"] = [
                "time": Self.iso(now), "index": Self.rounded(current.index.value),
                "band": current.index.band.rawValue, "zenith": Self.rounded(current.position.zenith),
            ]
        }
        object["skinTypes"] = SkinType.allCases.map { skin -> [String: Any] in
            [
                "type": skin.description, "med": skin.minimalErythemalDose,
                "minutesToErythema": maximum.minutesToErythema(skin).map(Self.rounded) ?? NSNull(),
                "minutesForVitaminD": maximum.minutesForVitaminD(skin).map(Self.rounded) ?? NSNull(),
            ]
        }
        let data =
            (try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `11:41:12 UTC (13:41:12 local, UTC+02:00)`: the machine's time zone.
    static func time(_ date: Date) -> String {
        let offset = TimeZone.current.secondsFromGMT(for: date)
        let sign = offset < 0 ? "-" : "+"
        let zone = String(format: "UTC%@%02d:%02d", sign, abs(offset) / 3600, abs(offset) % 3600 / 60)
        return "\(clock(date, offset: 0)) UTC (\(clock(date, offset: offset)) local, \(zone))"
    }

    static func clock(_ date: Date, offset: Int) -> String {
        let seconds = Int((date.timeIntervalSince1970 + Double(offset)).rounded())
        let inDay = ((seconds % 86_400) + 86_400) % 86_400
        return String(format: "%02d:%02d:%02d", inDay / 3600, inDay % 3600 / 60, inDay % 60)
    }

    static func iso(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded())
        return CalendarDay(Date(timeIntervalSince1970: Double(seconds))).description + "T"
            + clock(date, offset: 0) + "Z"
    }

    static func minutes(_ value: Double?) -> String {
        guard let value else { return "never" }
        return value >= 600 ? "over 10 h" : String(format: "%.0f min", value.rounded(.up))
    }

    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
