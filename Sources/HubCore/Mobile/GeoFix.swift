import Foundation

/// Where a mobile sensor's reading was taken: a position fix as a phone or a GPS module gives it.
public struct GeoFix: Sendable, Hashable {
    public var point: GeoPoint
    /// Metres above sea level.
    public var altitude: Double?
    /// Metres: the radius the position is good to (a phone's horizontal accuracy).
    public var accuracy: Double?

    public init(point: GeoPoint, altitude: Double? = nil, accuracy: Double? = nil) {
        self.point = point
        self.altitude = altitude
        self.accuracy = accuracy
    }

    public var latitude: Double { point.latitude }
    public var longitude: Double { point.longitude }

    /// The position a JSON payload carries: the hub's `lat`/`lon` (with `alt`, `accuracy`) or AirBeam-like
    /// `latitude`/`longitude` (with `altitude`), each a number or a numeric string (AirCasting's documents give
    /// them as strings). `nil` when the payload has no position; `.failure` when it has one that can't be a place
    /// (a latitude of 91, a longitude without a latitude).
    public static func read(from tree: JSONTree) -> Result<GeoFix, Problem>? {
        read { name in
            switch tree[name] {
            case .number(let number, _)?: .number(number)
            case .string(let text)?: .text(text)
            case nil, .null?: nil
            default: .other
            }
        }
    }

    /// The position among a device payload's other fields (a numeric mobile sensor's), as `read(from:)` reads it.
    public static func read(from attributes: SensorAttributes) -> Result<GeoFix, Problem>? {
        read { name in
            switch attributes[name] {
            case .number(let number)?: .number(number)
            case .string(let text)?: .text(text)
            case nil: nil
            default: .other
            }
        }
    }

    /// A member of a payload that may hold a coordinate.
    enum Field {
        case number(Double)
        case text(String)
        case other
    }

    static func read(_ field: (String) -> Field?) -> Result<GeoFix, Problem>? {
        func number(_ names: [String]) -> Result<Double, Problem>? {
            for name in names {
                switch field(name) {
                case .number(let number)?: return number.isFinite ? .success(number) : .failure(.notANumber(name))
                case .text(let text)?:
                    guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
                        return .failure(.notANumber(name))
                    }
                    return .success(number)
                case .other?: return .failure(.notANumber(name))
                case nil: continue
                }
            }
            return nil
        }
        let latitude = number(["lat", "latitude"])
        let longitude = number(["lon", "lng", "longitude"])
        guard latitude != nil || longitude != nil else { return nil }
        guard case .success(let lat)? = latitude else {
            if case .failure(let problem)? = latitude { return .failure(problem) }
            return .failure(.incomplete("a longitude without a latitude"))
        }
        guard case .success(let lon)? = longitude else {
            if case .failure(let problem)? = longitude { return .failure(problem) }
            return .failure(.incomplete("a latitude without a longitude"))
        }
        guard let point = GeoPoint(latitude: lat, longitude: lon) else {
            return .failure(.outOfRange("latitude \(lat), longitude \(lon) is not on the Earth (−90…90, −180…180)"))
        }
        var fix = GeoFix(point: point)
        switch number(["alt", "altitude"]) {
        case .success(let altitude)?: fix.altitude = altitude
        case .failure(let problem)?: return .failure(problem)
        case nil: break
        }
        switch number(["accuracy"]) {
        case .success(let accuracy)? where accuracy >= 0: fix.accuracy = accuracy
        case .success?: return .failure(.outOfRange("an accuracy below 0 m"))
        case .failure(let problem)?: return .failure(problem)
        case nil: break
        }
        return .success(fix)
    }

    /// Why a payload's position was refused.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        case notANumber(String)
        case incomplete(String)
        case outOfRange(String)

        public var description: String {
            switch self {
            case .notANumber(let field): "the position's '\(field)' is not a number"
            case .incomplete(let what): "the position has \(what)"
            case .outOfRange(let what): "the position has \(what)"
            }
        }
    }
}

/// A reading as the stores keep it: whose, in which recording session, and the reading.
public struct RecordedReading: Sendable, Hashable {
    /// The sensor's name.
    public var sensor: String
    /// The sensor's id (`Sensor.id`): stays when it is renamed.
    public var sensorID: String
    /// The mobile sensor's recording session (its id), or `nil` for a fixed sensor's readings, which belong to its
    /// one open-ended session.
    public var session: String?
    public var reading: SensorReading

    public init(sensor: String, reading: SensorReading, sensorID: String = "", session: String? = nil) {
        self.sensor = sensor
        self.sensorID = sensorID
        self.session = session
        self.reading = reading
    }
}
