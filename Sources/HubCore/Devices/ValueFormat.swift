import Foundation
import HubSupport

/// How a sensor's status is read from what its device publishes: where the value is in a JSON payload, what its
/// values mean, and, for a number, its unit, precision and plausible range. Empty for a sensor whose firmware
/// publishes the status itself, as the hub's original sensors do.
public struct ValueFormat: Sendable, Hashable {
    /// Where the value is in a JSON payload; `nil`: the payload is the value.
    public var path: ValuePath?
    /// What the values mean (`true=closed,false=open`).
    public var map: ValueMap?
    /// The unit of a numeric sensor's value (`°C`).
    public var unit: String?
    /// Decimals shown; `nil`: as published, at most two.
    public var decimals: Int?
    /// Values outside are refused as implausible (a humidity of 300 %, a sensor's error code).
    public var range: ClosedRange<Double>?
    /// A numeric sensor's named ranges of its value: its status is the band's name (see `ValueBands`).
    public var bands: ValueBands?

    public init(
        path: ValuePath? = nil, map: ValueMap? = nil, unit: String? = nil, decimals: Int? = nil,
        range: ClosedRange<Double>? = nil, bands: ValueBands? = nil
    ) {
        self.path = path
        self.map = map
        self.unit = unit
        self.decimals = decimals
        self.range = range
        self.bands = bands
    }

    public var isEmpty: Bool {
        path == nil && map == nil && unit == nil && decimals == nil && range == nil && bands == nil
    }

    /// Attributes kept from one payload, at most.
    public static let maximumAttributes = 64
    /// A JSON payload longer than this is refused (Zigbee2MQTT's largest are a few hundred bytes).
    public static let maximumPayload = 16 * 1024
    /// Numbers further from zero than this are refused whatever the range: no sensor measures them.
    public static let largestNumber = 1e12

    /// What a payload said: the status to show, the number for a numeric sensor, the other fields.
    public struct Decoded: Sendable, Equatable {
        public var status: String
        public var number: Double?
        public var attributes: SensorAttributes
    }

    /// Why a payload gave no status.
    public enum Problem: String, Error, Sendable, CaseIterable {
        case notJSON = "not JSON, for a sensor with a value path"
        case payloadTooLong = "a JSON payload longer than 16 KiB, for a sensor with a value path"
        case missingValue = "the value path is not in the payload"
        case wrongType = "the value is not of the sensor's type"
        case notANumber = "not a number, for a numeric sensor"
        case outOfRange = "a number outside the sensor's range"
        case controlCharacters = "the value contains control characters"
    }

    /// Reads `text` (a payload already checked to be UTF-8, trimmed and not empty).
    /// - Parameter numeric: whether the sensor's status is a number.
    public func decode(_ text: String, numeric: Bool) -> Result<Decoded, Problem> {
        guard let path else {
            // The payload is the value: a plain number (ESPHome), or a word to map (`ON`).
            return value(fromText: text, numeric: numeric).map {
                banded(Decoded(status: $0.0, number: $0.1, attributes: []))
            }
        }
        guard text.utf8.count <= Self.maximumPayload else { return .failure(.payloadTooLong) }
        guard let tree = try? JSONTree.parse(Array(text.utf8)) else { return .failure(.notJSON) }
        guard let (found, steps) = path.find(in: tree) else { return .failure(.missingValue) }
        let attributes = SensorAttributes(leavesOf: tree, except: steps)
        let shown: Result<(String, Double?), Problem>
        switch found {
        case .number(let number, let places): shown = self.value(number: number, places: places, numeric: numeric)
        case .string(let text):
            // Trimmed as a plain payload is: `" open "` maps as `open`, and only spaces is an empty status.
            shown = value(fromText: text.trimmingCharacters(in: .whitespacesAndNewlines), numeric: numeric)
        case .bool(let flag): shown = numeric ? .failure(.wrongType) : mapped(flag ? "true" : "false")
        case .null: return .failure(.missingValue)
        case .array, .object: return .failure(.wrongType)
        }
        return shown.map { banded(Decoded(status: $0.0, number: $0.1, attributes: attributes)) }
    }

    /// With bands, a number's status is its band's name, and the number is kept first among the attributes (as
    /// `value`, in place of a field of the payload of that name), so every place that shows the sensor can show it.
    private func banded(_ decoded: Decoded) -> Decoded {
        guard let bands, let number = decoded.number else { return decoded }
        let value = SensorAttributes.Attribute(name: ValueBands.valueAttribute, value: .number(number))
        let others = decoded.attributes.filter { $0.name != ValueBands.valueAttribute }
        return Decoded(status: bands.name(for: number), number: number, attributes: SensorAttributes([value] + others))
    }

    private func value(fromText text: String, numeric: Bool) -> Result<(String, Double?), Problem> {
        if numeric {
            let written = text.trimmingCharacters(in: .whitespaces)
            guard let number = Double(written) else { return .failure(.notANumber) }
            return value(number: number, places: Self.places(writtenIn: written), numeric: true)
        }
        return mapped(text)
    }

    /// - Parameter places: the digits after the point the number was written with, shown for a numeric sensor (a
    ///   map looks a number up as `format` writes it, whatever the device wrote: `1.0` maps as `1`).
    private func value(number: Double, places: Int?, numeric: Bool) -> Result<(String, Double?), Problem> {
        guard number.isFinite else { return .failure(.notANumber) }
        guard abs(number) <= Self.largestNumber, range?.contains(number) ?? true else { return .failure(.outOfRange) }
        if numeric { return .success((format(number, published: places), number)) }
        return mapped(format(number)).map { ($0.0, number) }
    }

    private func mapped(_ value: String) -> Result<(String, Double?), Problem> {
        let status = map?.status(for: value) ?? value
        if UnsafeText.firstUnsafe(in: status, allowing: .tab) != nil { return .failure(.controlCharacters) }
        return .success((status, nil))
    }

    /// The digits after the decimal point of a number as written (`22.0`: 1, `22`: 0); `nil` with an exponent.
    public static func places(writtenIn text: some StringProtocol) -> Int? {
        guard !text.contains(where: { $0 == "e" || $0 == "E" }) else { return nil }
        guard let point = text.firstIndex(of: ".") else { return 0 }
        return text.distance(from: text.index(after: point), to: text.endIndex)
    }

    /// `number` as the sensor shows it: `decimals` places; else as published (`22.0` stays `22.0`), with at most two;
    /// else (how it was written is not known) with at most two, trailing zeros left out.
    /// - Parameter places: the digits after the point it was written with (`places(writtenIn:)`).
    public func format(_ number: Double) -> String { format(number, published: nil) }

    /// `format(_:)` for a number written with `places` digits after its point (`places(writtenIn:)`).
    public func format(_ number: Double, published places: Int?) -> String {
        var text = FixedDecimal.text(number, places: decimals ?? min(places ?? 2, 2))
        if decimals == nil && places == nil {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        // A small negative number rounds to "-0" or "-0.0": no sign on a zero.
        if text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { text.removeFirst() }
        return text
    }

    /// A range as people write it, `-40..85`; `nil` when `text` is not one.
    public static func range(_ text: String) -> ClosedRange<Double>? {
        let bounds = text.components(separatedBy: "..").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard bounds.count == 2, let low = bounds[0], let high = bounds[1], low.isFinite, high.isFinite, low <= high
        else { return nil }
        return low...high
    }

    /// `range` as `range(_:)` reads it.
    /// The bounds exactly (not rounded to the sensor's decimals), so an export imports to the same range.
    public var rangeText: String? {
        func exact(_ value: Double) -> String {
            value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
        return range.map { "\(exact($0.lowerBound))..\(exact($0.upperBound))" }
    }

    /// The status with its unit, for people: `22.6 °C`.
    public func withUnit(_ status: String) -> String {
        guard let unit, !unit.isEmpty else { return status }
        return unit == "%" ? status + unit : status + " " + unit
    }
}

/// The fields of a device's payload other than its value (battery, link quality, humidity…): shown with the sensor,
/// usable in threshold rules, never a status change by themselves. Named by their dotted path (`AM2301.Humidity`).
public struct SensorAttributes: Sendable, Hashable, ExpressibleByArrayLiteral, RandomAccessCollection {
    public struct Attribute: Sendable, Hashable {
        public var name: String
        public var value: Value

        public init(name: String, value: Value) {
            self.name = name
            self.value = value
        }
    }

    public enum Value: Sendable, Hashable, CustomStringConvertible {
        case number(Double)
        case string(String)
        case bool(Bool)

        public var description: String {
            switch self {
            case .number(let number): ValueFormat().format(number)
            case .string(let text): text
            case .bool(let flag): flag ? "true" : "false"
            }
        }
    }

    public private(set) var members: [Attribute]

    public init(_ members: [Attribute]) { self.members = members }
    public init(arrayLiteral elements: Attribute...) { members = elements }

    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Attribute { members[position] }

    /// The attribute called `name`.
    public subscript(name: String) -> Value? { members.first { $0.name == name }?.value }

    /// The instant a reading says it is for: its `time` attribute, ISO 8601 with a zone (a feed's hour), or `nil`.
    public var readingTime: Timestamp? {
        guard case .string(let text)? = self["time"] else { return nil }
        return Timestamp(iso8601: text)
    }

    /// The scalar leaves of `tree` but the one at `steps`, at most `ValueFormat.maximumAttributes`. Text that could
    /// act on a terminal is kept escaped (`\u{1B}`), so every place that shows an attribute can show it as it is.
    init(leavesOf tree: JSONTree, except steps: [ValuePath.Segment]) {
        var members: [Attribute] = []
        var path: [ValuePath.Segment] = []
        func name(_ path: [ValuePath.Segment]) -> String { UnsafeText.escaped(ValuePath.text(of: path)) }
        func walk(_ node: JSONTree) {
            guard members.count < ValueFormat.maximumAttributes else { return }
            switch node {
            case .object(let children):
                for child in children {
                    path.append(.key(child.key))
                    walk(child.value)
                    path.removeLast()
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    path.append(.index(index))
                    walk(element)
                    path.removeLast()
                }
            case .null:
                break
            case .number(let number, _) where path != steps:
                members.append(Attribute(name: name(path), value: .number(number)))
            case .string(let text) where path != steps:
                members.append(Attribute(name: name(path), value: .string(UnsafeText.escaped(text))))
            case .bool(let flag) where path != steps:
                members.append(Attribute(name: name(path), value: .bool(flag)))
            default:
                break
            }
        }
        walk(tree)
        self.members = members
    }
}

extension Sensor {
    /// The status as people read it: a numeric sensor's value with its unit (`22.6 °C`); with bands, the band and
    /// the value (`Moderate (3.4 UVI)`).
    public var shownStatus: String {
        guard kind == .numeric, lastUpdated != nil, status != "offline" else { return status }
        guard format.bands != nil else { return format.withUnit(status) }
        guard let value else { return status }
        return "\(status) (\(format.withUnit(format.format(value))))"
    }
}
