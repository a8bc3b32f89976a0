import Foundation

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
