import Foundation

/// One region's reading from a regional air-quality feed (Singapore's NEA, OpenAQ, a generic JSON feed), for the
/// hour the feed says it is for.
public struct FeedReading: Sendable, Hashable {
    /// The region as the feed names it, lower-cased for NEA (`west`; v2 writes `West`).
    public var region: String
    /// Where the region is; `nil` when the feed does not say, or says 0,0 (NEA's `national`, which is no place).
    public var place: GeoPoint?
    /// The hour (or moment) the reading is for: with the region, what makes a reading the same reading.
    public var time: Timestamp
    /// When the feed published it (NEA's `update_timestamp`: a correction of the same hour has a later one).
    public var updated: Timestamp?
    /// The feed's own index: PSI for NEA, the US AQI elsewhere.
    public var index: Double
    /// Every number the feed gave for the region and time, by name (`pm25_sub_index`, `o3`…), sorted by name.
    public var metrics: [Metric]

    /// One named number.
    public struct Metric: Sendable, Hashable {
        public var name: String
        public var value: Double

        public init(name: String, value: Double) {
            self.name = name
            self.value = value
        }
    }

    public init(
        region: String, place: GeoPoint? = nil, time: Timestamp, updated: Timestamp? = nil, index: Double,
        metrics: [Metric] = []
    ) {
        self.region = region
        self.place = place
        self.time = time
        self.updated = updated
        self.index = index
        self.metrics = metrics.sorted { $0.name < $1.name }
    }

    /// The value of the metric called `name`, if the feed gave one.
    public func metric(_ name: String) -> Double? { metrics.first { $0.name == name }?.value }

    /// Indexes above this are refused as absurd (PSI and the US AQI top out at 500; NEA has published 401).
    public static let plausibleIndex: ClosedRange<Double> = 0...1000
    /// Other numbers (concentrations, sub-indexes) outside this are refused as absurd.
    public static let plausibleMetric: ClosedRange<Double> = 0...10_000
    /// Keys of the published payload that a metric may not be called.
    public static let reservedNames: Set<String> = ["value", "time", "updated", "latitude", "longitude"]

    /// The payload the feed's source publishes, retained, to the region's topic:
    /// `{"value":55,"time":"…","updated":"…","latitude":1.35,"longitude":103.7,"<metric>":…}`.
    public var json: String {
        var writer = JSONWriter(capacity: 256, compact: true)
        var first = true
        writer.raw("{")
        writer.key("value", first: &first)
        writer.number(index)
        writer.key("time", first: &first)
        writer.timestamp(time)
        if let updated {
            writer.key("updated", first: &first)
            writer.timestamp(updated)
        }
        if let place {
            writer.key("latitude", first: &first)
            writer.number(place.latitude)
            writer.key("longitude", first: &first)
            writer.number(place.longitude)
        }
        for metric in metrics where !Self.reservedNames.contains(metric.name) {
            writer.key(metric.name, first: &first)
            writer.number(metric.value)
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// A region's name as a sensor name and topic level: lower case, letters and digits kept, anything else one `-`
    /// (`Ang Mo Kio / Blk 1` → `ang-mo-kio-blk-1`); `nil` when nothing is left.
    public static func slug(_ region: String) -> String? {
        var slug = ""
        for character in region.lowercased() {
            if character.isLetter || character.isNumber {
                slug.append(character)
            } else if !slug.isEmpty && !slug.hasSuffix("-") {
                slug.append("-")
            }
            if slug.count >= 64 { break }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return slug.isEmpty ? nil : slug
    }
}

/// What one poll of a feed gave: the readings, and the ones refused with why.
public struct FeedParse: Sendable, Hashable {
    public var readings: [FeedReading]
    /// A region missing, an absurd value, a bad timestamp: each names the region and what was wrong.
    public var rejected: [FeedError]

    public init(readings: [FeedReading] = [], rejected: [FeedError] = []) {
        self.readings = readings
        self.rejected = rejected
    }
}

/// Why a feed document, or one region's reading in it, was refused.
public struct FeedError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: String, Sendable, Hashable {
        case notJSON = "not JSON"
        case missing = "missing"
        case wrongType = "wrong type"
        case badTimestamp = "bad timestamp"
        case absurd = "absurd value"
        case service = "service error"
    }

    let code: Code
    /// What was wrong, naming where in the document.
    public let description: String

    /// A short word for the kind of problem (`missing`, `absurd value`…), for counters.
    public var kind: String { code.rawValue }

    /// The document is not JSON.
    static func notJSON(_ error: JSONSyntaxError) -> FeedError {
        FeedError(code: .notJSON, description: "the document is not JSON: \(error)")
    }

    /// Something the feed must have is not there.
    static func missing(_ what: String) -> FeedError { FeedError(code: .missing, description: "no \(what)") }

    /// A value of the wrong kind.
    static func wrongType(_ path: String, expected: String, got: String) -> FeedError {
        FeedError(code: .wrongType, description: "\(path) is \(got), expected \(expected)")
    }

    /// A time that is not ISO 8601 (nor seconds since 1970, where numbers are allowed).
    static func badTimestamp(_ path: String, _ text: String) -> FeedError {
        FeedError(code: .badTimestamp, description: "\(path) is not a time: \(text.prefix(64))")
    }

    /// A number no air-quality feed can mean.
    static func absurd(_ path: String, _ value: Double, allowed: ClosedRange<Double>) -> FeedError {
        FeedError(
            code: .absurd,
            description: "\(path) is \(value), outside \(allowed.lowerBound)…\(allowed.upperBound): refused as absurd")
    }

    /// The service answered with an error of its own (NEA v2's non-zero `code`).
    static func service(_ message: String) -> FeedError {
        FeedError(code: .service, description: "the feed reported an error: \(message.prefix(200))")
    }
}

/// A JSON value with where it is in its document, for error messages that name the field.
struct FeedNode {
    let tree: JSONTree
    let path: String

    /// Parses a whole document.
    static func document(_ bytes: [UInt8], name: String = "") throws(FeedError) -> FeedNode {
        do {
            return FeedNode(tree: try JSONTree.parse(bytes), path: name)
        } catch {
            throw .notJSON(error)
        }
    }

    private func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The member called one of `keys` (a field with another spelling in another version), if any.
    subscript(_ keys: String...) -> FeedNode? {
        for key in keys {
            if let value = tree[key], value != .null { return FeedNode(tree: value, path: child(key)) }
        }
        return nil
    }

    /// The member called one of `keys`; an error naming the first spelling when there is none.
    func require(_ keys: String...) throws(FeedError) -> FeedNode {
        for key in keys {
            if let value = tree[key], value != .null { return FeedNode(tree: value, path: child(key)) }
        }
        throw .missing(child(keys[0]))
    }

    func array() throws(FeedError) -> [FeedNode] {
        guard case .array(let elements) = tree else {
            throw .wrongType(path, expected: "a list", got: tree.kindName)
        }
        return elements.enumerated().map { FeedNode(tree: $1, path: "\(path)[\($0)]") }
    }

    func members() throws(FeedError) -> [(key: String, node: FeedNode)] {
        guard case .object(let members) = tree else {
            throw .wrongType(path, expected: "an object", got: tree.kindName)
        }
        return members.map { ($0.key, FeedNode(tree: $0.value, path: child($0.key))) }
    }

    func string() throws(FeedError) -> String {
        switch tree {
        case .string(let text): return text
        case .number(let number, _): return ValueFormat().format(number)
        default: throw .wrongType(path, expected: "a string", got: tree.kindName)
        }
    }

    /// A number; numeric text (`"12.5"`) is taken too.
    func number() throws(FeedError) -> Double {
        switch tree {
        case .number(let number, _): return number
        case .string(let text):
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
                throw .wrongType(path, expected: "a number", got: "\"\(text.prefix(32))\"")
            }
            return number
        default: throw .wrongType(path, expected: "a number", got: tree.kindName)
        }
    }

    /// A number within `range`; an absurd-value error otherwise.
    func number(in range: ClosedRange<Double>) throws(FeedError) -> Double {
        let value = try number()
        guard range.contains(value) else { throw .absurd(path, value, allowed: range) }
        return value
    }

    /// ISO 8601 text; with `epochNumbers`, a number of seconds (or, past 10¹¹, milliseconds) since 1970 too.
    func timestamp(epochNumbers: Bool = false) throws(FeedError) -> Timestamp {
        switch tree {
        case .string(let text):
            guard let time = Timestamp(iso8601: text) else { throw .badTimestamp(path, text) }
            return time
        case .number(let number, _) where epochNumbers && number.isFinite && number > 0 && number < 1e14:
            let milliseconds = number >= 1e11 ? number : number * 1000
            return Timestamp(millisecondsSince1970: Int64(milliseconds))
        default:
            throw .badTimestamp(path, tree.kindName)
        }
    }

    /// A place from `latitude`/`longitude` members; `nil` when absent, out of range, or 0,0 (no place).
    func place() -> GeoPoint? {
        guard let latitude = try? self["latitude"]?.number(), let longitude = try? self["longitude"]?.number(),
            latitude != 0 || longitude != 0
        else { return nil }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }
}
