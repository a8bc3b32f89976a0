import Foundation

/// What hubd's UV source publishes at one instant, worked out from the place, the time, the configured ozone and
/// the last good TEMIS page: a value type with no I/O (the service fetches, keeps and publishes).
public struct UVSourceReading: Sendable, Hashable {
    /// Where the ozone column came from.
    public enum OzoneSource: String, Sendable, Hashable {
        /// Today's row of the last good TEMIS page.
        case temis
        /// `uv.ozone`.
        case configured
        /// Neither: the climatological 300 DU.
        case `default`
    }

    /// One day of the week's forecast from the TEMIS page: the clear-sky maximum at the computed solar noon from
    /// that day's ozone (Madronich, as for today), and TEMIS's own index for the day.
    public struct ForecastDay: Sendable, Hashable {
        public var day: CalendarDay
        public var maximum: UVIndex
        public var ozone: Double
        public var temisIndex: UVIndex
    }

    /// The state of the TEMIS page behind a reading, for the payload: when the values were fetched, and the fetches
    /// that failed since (the values are then the last good ones).
    public struct TEMISStatus: Sendable, Hashable {
        public var fetched: Date?
        public var failures: Int
        public var lastError: String?

        public init(fetched: Date? = nil, failures: Int = 0, lastError: String? = nil) {
            self.fetched = fetched
            self.failures = failures
            self.lastError = lastError
        }
    }

    public var time: Date
    public var index: UVIndex
    public var maximum: UVIndex
    public var solarNoon: Date
    public var ozone: Double
    public var ozoneSource: OzoneSource
    public var forecast: [ForecastDay]

    /// The reading at `now` for `place`: the ozone is today's row of `page` (today at the place: its mean solar
    /// date), else `settings.ozone`, else 300 DU.
    public init(settings: UVSettings, place: GeoPoint, now: Date, page: TEMISPage?) {
        let today = CalendarDay(now, offset: place.longitude * 240)
        let day = SolarDay(place: place, day: today)
        if let row = page?.days.first(where: { $0.day == today }) {
            (ozone, ozoneSource) = (row.ozone, .temis)
        } else if let configured = settings.ozone {
            (ozone, ozoneSource) = (configured, .configured)
        } else {
            (ozone, ozoneSource) = (UVIndex.climatologicalOzone, .default)
        }
        time = now
        solarNoon = day.solarNoon
        maximum = day.maximumUVIndex(ozone: ozone, altitude: settings.altitude)
        index = UVIndex.clearSky(
            zenith: SolarPosition(place: place, date: now).zenith, ozone: ozone, altitude: settings.altitude)
        forecast = (page?.days ?? []).filter { $0.day >= today }.map { row in
            ForecastDay(
                day: row.day,
                maximum: SolarDay(place: place, day: row.day).maximumUVIndex(
                    ozone: row.ozone, altitude: settings.altitude),
                ozone: row.ozone, temisIndex: row.uvIndex)
        }
    }

    /// The JSON the source publishes: `uvi` (the sensor's value), then attributes — `max_today`, `solar_noon`,
    /// `ozone`, `ozone_source`, minutes to sunburn and for vitamin D for skin type II at today's maximum, and with
    /// TEMIS `temis_fetched`, `temis_failures`, `temis_error` and the `forecast` (a day each: `date`, `max_uvi`,
    /// `band`, `ozone`, `temis_uvi`).
    public func payload(temis: TEMISStatus?) -> String {
        var writer = JSONWriter(capacity: 1024, compact: true)
        var first = true
        func number(_ key: String, _ value: Double?) {
            writer.key(key, first: &first)
            if let value { writer.number((value * 100).rounded() / 100) } else { writer.raw("null") }
        }
        func text(_ key: String, _ value: String) {
            writer.key(key, first: &first)
            writer.string(value)
        }
        writer.raw("{")
        number("uvi", index.value)
        number("max_today", maximum.value)
        text("max_band", maximum.band.rawValue)
        text("solar_noon", Timestamp(solarNoon).iso8601)
        number("ozone", ozone)
        text("ozone_source", ozoneSource.rawValue)
        // At today's maximum; none (null) when the Sun stays below the horizon.
        number("erythema_minutes_type2", maximum.minutesToErythema(.ii))
        number("vitamin_d_minutes_type2", maximum.minutesForVitaminD(.ii))
        if let temis {
            if let fetched = temis.fetched { text("temis_fetched", Timestamp(fetched).iso8601) }
            writer.key("temis_failures", first: &first)
            writer.number(temis.failures)
            if let error = temis.lastError { text("temis_error", error) }
            writer.key("forecast", first: &first)
            writer.raw("[")
            for (position, day) in forecast.enumerated() {
                if position > 0 { writer.raw(",") }
                var inner = true
                writer.raw("{")
                writer.key("date", first: &inner)
                writer.string(day.day.description)
                writer.key("max_uvi", first: &inner)
                writer.number((day.maximum.value * 10).rounded() / 10)
                writer.key("band", first: &inner)
                writer.string(day.maximum.band.rawValue)
                writer.key("ozone", first: &inner)
                writer.number(day.ozone)
                writer.key("temis_uvi", first: &inner)
                writer.number(day.temisIndex.value)
                writer.raw("}")
            }
            writer.raw("]")
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
