import Foundation

// MARK: - Encoding

extension DefaultsDocument {
    /// The document as JSON: readable, one sensor a line, unknown keys as they were read.
    public func encode() -> [UInt8] {
        encode(withSensors: true)
    }

    /// The document without its sensors (and without the `sensors` key), as JSON: the schema version, the broker
    /// settings, and the keys a newer version wrote.
    public func headerJSON() -> [UInt8] {
        encode(withSensors: false)
    }

    private func encode(withSensors: Bool) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + (withSensors ? sensors.count * 160 : 0))
        var first = true
        writer.raw("{\n")
        writer.topKey("schemaVersion", first: &first, separator: ",\n")
        writer.number(schemaVersion)
        writer.topKey("broker", first: &first, separator: ",\n")
        broker.encode(into: &writer)
        if withSensors {
            writer.topKey("sensors", first: &first, separator: ",\n")
            writeSensors(into: &writer)
        }
        for member in unknownFields.members {
            writer.topKey(member.key, first: &first, separator: ",\n")
            writer.raw(member.value)
        }
        writer.raw("\n}\n")
        return writer.bytes
    }

    private func writeSensors(into writer: inout JSONWriter) {
        if sensors.isEmpty {
            writer.raw("[]")
        } else {
            writer.raw("[\n")
            for (index, sensor) in sensors.enumerated() {
                writer.raw("    " as StaticString)
                if let range = sourceRanges[index] {
                    writer.raw(source[range])
                } else {
                    sensor.encode(into: &writer)
                }
                writer.raw(index == sensors.count - 1 ? "\n  ]" as StaticString : ",\n" as StaticString)
            }
        }
    }
}

extension JSONWriter {
    /// `key` at the document's top level, two spaces in.
    fileprivate mutating func topKey(_ key: String, first: inout Bool, separator: String) {
        if !first { raw(separator) }
        first = false
        raw("  ")
        string(key)
        raw(": ")
    }

    mutating func unknown(_ fields: UnknownFields, first: inout Bool) {
        for member in fields.members {
            key(member.key, first: &first)
            raw(member.value)
        }
    }
}
