import Foundation
import HubSupport

// A sensor as the registry document writes it (`DefaultsDocument.appendDecodedSensor` reads it, with the document's
// indices), and the small conversions the document's reader and writer share.

extension Sensor {
    func encode(into writer: inout JSONWriter) {
        var first = true
        writer.raw("{" as StaticString)
        writer.key("id", first: &first)
        writer.string(id)
        writer.key("name", first: &first)
        writer.string(name)
        writer.key("topic", first: &first)
        writer.string(topic)
        writer.key("status", first: &first)
        writer.string(status)
        if let lastUpdated {
            writer.key("lastUpdated", first: &first)
            writer.timestamp(lastUpdated)
        }
        writer.key("added", first: &first)
        writer.timestamp(added)
        writer.key("kind", first: &first)
        writer.string(kind.rawValue)
        if let silenceTimeout {
            writer.key("silenceTimeout", first: &first)
            writer.number(silenceTimeout.seconds)
        }
        if sequence > 0 {
            writer.key("sequence", first: &first)
            writer.number(sequence)
        }
        format.encode(into: &writer, first: &first)
        if let availability {
            writer.key("availability", first: &first)
            writer.string(availability)
        }
        if !attributes.isEmpty {
            writer.key("attributes", first: &first)
            attributes.write(into: &writer)
        }
        if !alerts.isEmpty {
            writer.key("alerts", first: &first)
            writer.strings(alerts)
        }
        if let statusBeforeOffline {
            writer.key("statusBeforeOffline", first: &first)
            writer.string(statusBeforeOffline)
        }
        if let session {
            writer.key("session", first: &first)
            session.write(into: &writer)
        }
        writer.unknown(unknownFields, first: &first)
        writer.raw("}")
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

extension String {
    /// Unicode canonical composition (NFC), so "Küche" typed two ways is one name.
    var precomposedNFC: String {
        // ASCII is already NFC: skip Foundation's normalisation for it.
        utf8.allSatisfy { $0 < 0x80 } ? self : precomposedStringWithCanonicalMapping
    }
}

extension ValueFormat {
    /// The format's members of a sensor's object: `value`, `map`, `unit`, `decimals`, `range` (`[min, max]`), `bands`.
    package func encode(into writer: inout JSONWriter, first: inout Bool) {
        if let path {
            writer.key("value", first: &first)
            writer.string(path.description)
        }
        if let map {
            writer.key("map", first: &first)
            writer.string(map.description)
        }
        if let unit {
            writer.key("unit", first: &first)
            writer.string(unit)
        }
        if let decimals {
            writer.key("decimals", first: &first)
            writer.number(decimals)
        }
        if let range {
            writer.key("range", first: &first)
            writer.raw("[")
            writer.number(range.lowerBound)
            writer.raw(",")
            writer.number(range.upperBound)
            writer.raw("]")
        }
        if let bands {
            writer.key("bands", first: &first)
            writer.string(bands.description)
        }
    }
}

extension SensorAttributes {
    /// The attributes as a JSON object, in their order.
    package func write(into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        for member in members {
            writer.key(member.name, first: &first)
            switch member.value {
            case .number(let number): writer.number(number)
            case .string(let text): writer.string(text)
            case .bool(let flag): writer.bool(flag)
            }
        }
        writer.raw("}")
    }

    /// Reads an object of scalars (what `write(into:)` writes).
    static func read(_ reader: inout JSONReader, at path: String) throws(JSONSyntaxError) -> SensorAttributes {
        guard reader.nextKind == "an object" else {
            throw reader.error("\(path): expected an object, found \(reader.nextKind)")
        }
        var members: [Attribute] = []
        try reader.readObject { name, reader throws(JSONSyntaxError) in
            let value: Value
            if reader.nextIsString {
                value = .string(try reader.readString())
            } else if reader.nextIsNumber {
                guard let number = try reader.optionalDouble(at: "\(path).\(name)") else { return }
                value = .number(number)
            } else if reader.nextIsNull {
                try reader.readNull()
                return
            } else {
                value = .bool(try reader.bool(at: "\(path).\(name)"))
            }
            members.append(Attribute(name: UnsafeText.escaped(name), value: value))
        }
        return SensorAttributes(members)
    }
}

extension Sensor {
    /// A sensor's keys, in the order `DefaultsDocument.appendDecodedSensor` matches them (from `value` on, the
    /// device members `Sensor.Extras.read` reads, in this order).
    static let keys = JSONReader.KnownKeys(
        [
            "name", "topic", "status", "lastUpdated", "added", "kind", "silenceTimeout", "id", "sequence", "value",
            "map", "unit", "decimals", "range", "availability", "attributes", "alerts", "statusBeforeOffline", "bands",
            "session",
        ])

}

extension Sensor.Extras {
    /// Reads the device members of a sensor's object as the document's reader meets them (`value` …
    /// `session`, in the order of `Sensor.keys` from `value` on) straight into the sensor's out-of-line fields.
    mutating func read(_ member: Int, from reader: inout JSONReader, at path: String) throws(JSONSyntaxError) {
        let at = reader.index
        func parsed<T>(_ key: String, _ make: (String) throws(ValuePathError) -> T) throws(JSONSyntaxError) -> T {
            let text = try reader.string(at: "\(path).\(key)")
            do {
                return try make(text)
            } catch {
                throw reader.error("\(path).\(key): \(error)", at: at)
            }
        }
        switch member {
        case 0: format.path = try parsed("value") { text throws(ValuePathError) in try ValuePath(text) }
        case 1: format.map = try parsed("map") { text throws(ValuePathError) in try ValueMap(text) }
        case 2: format.unit = try reader.string(at: "\(path).unit")
        case 3:
            let decimals = try reader.int(at: "\(path).decimals")
            guard (0...6).contains(decimals) else {
                throw reader.error("\(path).decimals: expected 0 to 6", at: at)
            }
            format.decimals = decimals
        case 4:
            guard reader.nextKind == "a list" else {
                throw reader.error("\(path).range: expected [lowest, highest], found \(reader.nextKind)")
            }
            var bounds: [Double] = []
            try reader.readArray { reader throws(JSONSyntaxError) in
                bounds.append(try reader.optionalDouble(at: "\(path).range") ?? .nan)
            }
            guard bounds.count == 2, bounds[0] <= bounds[1] else {
                throw reader.error("\(path).range: expected [lowest, highest]", at: at)
            }
            format.range = bounds[0]...bounds[1]
        case 5:
            // Subscribed to as it is: a wildcard or a '$' topic would be a subscription to other topics.
            let topic = try reader.string(at: "\(path).availability")
            do {
                availability = try SensorRules.topic(topic)
            } catch {
                throw reader.error("\(path).availability: \(error)", at: at)
            }
        case 6: attributes = try SensorAttributes.read(&reader, at: "\(path).attributes")
        case 7:
            try reader.readArray { reader throws(JSONSyntaxError) in
                alerts.append(try reader.string(at: "\(path).alerts"))
            }
        case 8: statusBeforeOffline = try reader.string(at: "\(path).statusBeforeOffline")
        case 10: session = try OpenSession.read(&reader, at: "\(path).session")
        default:
            let text = try reader.string(at: "\(path).bands")
            do {
                format.bands = try ValueBands(text)
            } catch {
                throw reader.error("\(path).bands: \(error)", at: at)
            }
        }
    }
}

extension SensorAttributes {
    /// The attributes as compact JSON text (the journal keeps them so, in one string member).
    package var jsonText: String {
        var writer = JSONWriter(capacity: 32 * count, compact: true)
        write(into: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Reads what `jsonText` wrote; `nil` when it is not that.
    package init?(jsonText: String) {
        let bytes = Array(jsonText.utf8)
        let read = bytes.withUnsafeBufferPointer { buffer -> SensorAttributes? in
            var reader = JSONReader(buffer)
            guard let attributes = try? SensorAttributes.read(&reader, at: "attributes"), (try? reader.finish()) != nil
            else { return nil }
            return attributes
        }
        guard let read else { return nil }
        self = read
    }
}
