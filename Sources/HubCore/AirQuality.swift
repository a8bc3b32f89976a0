import Foundation
import HubSupport

/// One particulate measurement, in µg/m³; either value may be missing (ESPHome sends them on separate topics).
public struct ParticulateReading: Sendable, Hashable {
    public var pm25: Double?
    public var pm10: Double?
    public var time: Timestamp
    /// The sensor's own id, when the payload says (the SDS011's `A160`).
    public var device: String?
    /// Where it was taken, when a mobile sensor's payload says (`lat`, `lon`: see `GeoFix.read`).
    public var position: GeoFix?

    public init(pm25: Double?, pm10: Double?, time: Timestamp, device: String? = nil, position: GeoFix? = nil) {
        self.pm25 = pm25
        self.pm10 = pm10
        self.time = time
        self.device = device
        self.position = position
    }

    /// Reads the payloads particulate firmware publishes: the hub's own `{"pm25":12.3,"pm10":20.1,…}`, Tasmota's
    /// `{"SDS0X1":{"PM2.5":12.3,"PM10":20.1}}`, and ESPHome's plain number (taken as PM2.5). `nil` for anything
    /// else, and for values outside 0–10,000 µg/m³.
    public static func parse(_ payload: [UInt8], receivedAt time: Timestamp) -> ParticulateReading? {
        guard let text = String(validating: payload, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty, text.utf8.count <= 4096
        else { return nil }
        func valid(_ value: Double?) -> Double? {
            guard let value, value.isFinite, (0...10_000).contains(value) else { return nil }
            return value
        }
        if let number = Double(text) {
            return valid(number).map { ParticulateReading(pm25: $0, pm10: nil, time: time) }
        }
        // The devices' JSON reader (JSONTree), not JSONSerialization: on Linux the latter's NSNumber 0 and 1 also pass
        // for booleans, which rejected clean-air readings of 0 and 1 µg/m³ (found by the fuzzer).
        guard let tree = try? JSONTree.parse(Array(text.utf8)), case .object(let members) = tree else { return nil }
        func number(_ value: JSONTree?) -> Double? {
            switch value {
            case .number(let number, _)?: return number
            case .string(let text)?: return Double(text)
            default: return nil
            }
        }
        // AirBeam-like names beside the hub's own.
        var pm25 = valid(number(tree["pm25"]) ?? number(tree["pm2_5"]))
        var pm10 = valid(number(tree["pm10"]))
        if pm25 == nil && pm10 == nil {
            // Tasmota: the first member holding PM2.5 / PM10 (SDS0X1, SDS011, PMS5003, …).
            for member in members.sorted(by: { $0.key < $1.key }) {
                guard case .object = member.value else { continue }
                pm25 = valid(number(member.value["PM2.5"]))
                pm10 = valid(number(member.value["PM10"]))
                if pm25 != nil || pm10 != nil { break }
            }
        }
        guard pm25 != nil || pm10 != nil else { return nil }
        var stamped: Timestamp?
        if case .string(let text)? = tree["time"] { stamped = Timestamp(iso8601: text) }
        var device: String?
        if case .string(let id)? = tree["id"] { device = id }
        // A reading with a position that can't be a place is refused, not kept without it: a track with a point at
        // the wrong place, or a point missing, misleads more than a reading missing.
        var position: GeoFix?
        switch GeoFix.read(from: tree) {
        case .success(let fix)?: position = fix
        case .failure?: return nil
        case nil: break
        }
        return ParticulateReading(pm25: pm25, pm10: pm10, time: stamped ?? time, device: device, position: position)
    }

    /// The hub's own payload: `{"pm25":12.3,"pm10":20.1,"time":"…","id":"A160"}`.
    /// The device id is escaped: one read from a sensor could hold quotes or backslashes (the fuzzer found one).
    public var json: String {
        var writer = JSONWriter(capacity: 96, compact: true)
        var first = true
        writer.raw("{")
        if let pm25 {
            writer.key("pm25", first: &first)
            writer.raw(Self.format(pm25))
        }
        if let pm10 {
            writer.key("pm10", first: &first)
            writer.raw(Self.format(pm10))
        }
        writer.key("time", first: &first)
        writer.timestamp(time)
        if let device {
            writer.key("id", first: &first)
            writer.string(device)
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// One decimal, as the sensor measures.
    public static func format(_ value: Double) -> String { FixedDecimal.text(value, places: 1) }
}

/// The pollutants the hub evaluates.
public enum Pollutant: String, Sendable, Hashable, CaseIterable {
    case pm25 = "PM2.5"
    case pm10 = "PM10"
}

/// The US EPA Air Quality Index, with the PM2.5 breakpoints revised in 2024.
public enum AQI {
    /// A category: its name and colour (the colour's name, and the RGB the EPA gives for it).
    public struct Category: Sendable, Hashable {
        public var name: String
        public var colour: String
        /// `#rrggbb`: the dashboard's card, its session maps' tracks and their legends all take it from here.
        public var hex: String
        public var range: ClosedRange<Int>
    }

    /// The EPA's categories and colours, as its Technical Assistance Document for the Reporting of Daily Air
    /// Quality (2024) gives them in RGB: green 0,228,0; yellow 255,255,0; orange 255,126,0; red 255,0,0; purple
    /// 143,63,151; maroon 126,0,35.
    public static let categories = [
        Category(name: "Good", colour: "green", hex: "#00e400", range: 0...50),
        Category(name: "Moderate", colour: "yellow", hex: "#ffff00", range: 51...100),
        Category(name: "Unhealthy for Sensitive Groups", colour: "orange", hex: "#ff7e00", range: 101...150),
        Category(name: "Unhealthy", colour: "red", hex: "#ff0000", range: 151...200),
        Category(name: "Very Unhealthy", colour: "purple", hex: "#8f3f97", range: 201...300),
        Category(name: "Hazardous", colour: "maroon", hex: "#7e0023", range: 301...500),
    ]

    /// The category of a PM2.5 concentration (µg/m³) on its own.
    public static func category(pm25: Double) -> Category { category(index(.pm25, pm25)) }

    /// The PM2.5 concentrations (µg/m³) each category spans, lowest first.
    public static var pm25Ranges: [(category: Category, low: Double, high: Double)] {
        zip(categories, pm25Breakpoints).map { ($0, $1.0, $1.1) }
    }

    static let pm25Breakpoints: [(Double, Double)] = [
        (0.0, 9.0), (9.1, 35.4), (35.5, 55.4), (55.5, 125.4), (125.5, 225.4), (225.5, 325.4),
    ]
    static let pm10Breakpoints: [(Double, Double)] = [
        (0, 54), (55, 154), (155, 254), (255, 354), (355, 424), (425, 604),
    ]

    /// The index for a concentration: PM2.5 truncated to 0.1 µg/m³, PM10 to 1, then interpolated within its
    /// breakpoints and rounded; above the table, 500.
    public static func index(_ pollutant: Pollutant, _ concentration: Double) -> Int {
        let (value, table) =
            pollutant == .pm25
            ? ((max(concentration, 0) * 10).rounded(.down) / 10, pm25Breakpoints)
            : (max(concentration, 0).rounded(.down), pm10Breakpoints)
        for (index, (low, high)) in table.enumerated() where value <= high {
            let range = categories[index].range
            let aqi =
                Double(range.upperBound - range.lowerBound) / (high - low) * (value - low) + Double(range.lowerBound)
            return Int(aqi.rounded())
        }
        return 500
    }

    public static func category(_ index: Int) -> Category {
        categories.first { $0.range.contains(index) } ?? categories.last!
    }

    /// The worse of the two pollutants' indices.
    public static func index(pm25: Double?, pm10: Double?) -> Int? {
        let values = [pm25.map { index(.pm25, $0) }, pm10.map { index(.pm10, $0) }].compactMap { $0 }
        return values.max()
    }
}

/// The WHO Global Air Quality Guidelines (2021), µg/m³: the guideline (AQG) level and the interim targets.
public enum WHOGuideline {
    public enum Averaging: String, Sendable, Hashable {
        case day = "24 h"
        case year = "annual"
    }

    /// Interim targets IT-1…IT-4, then the AQG level.
    public static func levels(_ pollutant: Pollutant, _ averaging: Averaging) -> [(name: String, value: Double)] {
        let values: [Double]
        switch (pollutant, averaging) {
        case (.pm25, .year): values = [35, 25, 15, 10, 5]
        case (.pm25, .day): values = [75, 50, 37.5, 25, 15]
        case (.pm10, .year): values = [70, 50, 30, 20, 15]
        case (.pm10, .day): values = [150, 100, 75, 50, 45]
        }
        return zip(
            ["interim target 1", "interim target 2", "interim target 3", "interim target 4", "guideline"], values
        )
        .map { ($0, $1) }
    }

    public static func guideline(_ pollutant: Pollutant, _ averaging: Averaging) -> Double {
        levels(pollutant, averaging).last!.value
    }

    /// Which WHO name a threshold has, if it is one of theirs ("the WHO guideline of 15").
    public static func name(of threshold: Double, _ pollutant: Pollutant, _ averaging: Averaging) -> String? {
        let period = averaging == .year ? "annual " : ""
        return levels(pollutant, averaging).first { $0.value == threshold }.map {
            "the WHO \(period)\($0.name) of \(ParticulateReading.trim($0.value))"
        }
    }
}

extension ParticulateReading {
    /// 15 rather than 15.0; 37.5 as it is.
    public static func trim(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }
}

/// The original air monitor's light: green, yellow or red from one reading (red: PM2.5 ≥ 5 or PM10 ≥ 15; yellow:
/// PM2.5 ≥ 3 or PM10 ≥ 10).
public enum AirLight: String, Sendable {
    case green, yellow, red

    public init(pm25: Double?, pm10: Double?) {
        let p25 = pm25 ?? 0
        let p10 = pm10 ?? 0
        if p25 >= 5 || p10 >= 15 {
            self = .red
        } else if p25 >= 3 || p10 >= 10 {
            self = .yellow
        } else {
            self = .green
        }
    }
}

/// A measurement for the history: a particulate sensor's reading, or a numeric sensor's value.
public enum SensorReading: Sendable, Hashable {
    case particulate(ParticulateReading)
    case numeric(Double, unit: String?, time: Timestamp, position: GeoFix? = nil)

    public var time: Timestamp {
        switch self {
        case .particulate(let reading): reading.time
        case .numeric(_, _, let time, _): time
        }
    }

    /// Where it was taken, for a mobile sensor's.
    public var position: GeoFix? {
        switch self {
        case .particulate(let reading): reading.position
        case .numeric(_, _, _, let position): position
        }
    }

    /// The particulate reading, for a particulate sensor's.
    public var particulate: ParticulateReading? {
        guard case .particulate(let reading) = self else { return nil }
        return reading
    }

    /// The value, for a numeric sensor's.
    public var number: Double? {
        guard case .numeric(let number, _, _, _) = self else { return nil }
        return number
    }
}
