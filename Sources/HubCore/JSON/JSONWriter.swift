import HubSupport

/// Writes JSON text into a byte buffer: the counterpart of `JSONReader`, fast enough for a 100,000-sensor store.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []
    /// What goes between an object's members, and after a key.
    private let comma: StaticString
    private let colon: StaticString

    /// - Parameter compact: `"key":value,"next"` instead of `"key": value, "next"` (for the HTTP API).
    package init(capacity: Int = 0, compact: Bool = false) {
        bytes.reserveCapacity(capacity)
        (comma, colon) = compact ? (",", ":") : (", ", ": ")
    }

    package mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Literal text, without building a `String`.
    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A time as an ISO 8601 string.
    package mutating func timestamp(_ time: Timestamp) {
        bytes.append(UInt8(ascii: "\""))
        time.write(into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    package mutating func raw(_ json: RawJSON) { bytes.append(contentsOf: json.bytes) }

    mutating func raw(_ slice: ArraySlice<UInt8>) { bytes.append(contentsOf: slice) }

    /// A string, with control and invisible formatting characters (`UnsafeText`) as `\u` escapes: the same text
    /// to a JSON reader, and nothing a terminal acts on when the JSON is printed.
    package mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        let plain = value.withUTF8 { utf8 in
            // Most strings need no escaping: copy them in one go.
            if !utf8.contains(where: {
                $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 >= 0x7F
            }) {
                bytes.append(contentsOf: utf8)
                return true
            }
            return false
        }
        if !plain {
            for scalar in value.unicodeScalars {
                if scalar.value < 0x7F {
                    escape(UInt8(scalar.value))
                } else if UnsafeText.isUnsafe(scalar) {
                    unicodeEscape(scalar)
                } else {
                    bytes.append(contentsOf: String(scalar).utf8)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `\u00XX`, or a surrogate pair beyond the Basic Multilingual Plane.
    private mutating func unicodeEscape(_ scalar: Unicode.Scalar) {
        let hex = Array("0123456789abcdef".utf8)
        for unit in String(scalar).utf16 {
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
            for shift in [12, 8, 4, 0] { bytes.append(hex[Int(unit >> UInt16(shift)) & 0xF]) }
        }
    }

    package mutating func number(_ value: Int) { raw(String(value)) }

    /// A number as JSON writes it: integral values without a fraction; `null` for what JSON can't say (NaN, ±∞).
    package mutating func number(_ value: Double) {
        if !value.isFinite {
            raw("null" as StaticString)
        } else if value.rounded() == value && abs(value) < 1e15 {
            raw(String(Int64(value)))
        } else {
            raw("\(value)")
        }
    }

    /// A list of strings.
    package mutating func strings(_ values: [String]) {
        raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { raw(",") }
            string(value)
        }
        raw("]")
    }

    package mutating func bool(_ value: Bool) { value ? raw("true" as StaticString) : raw("false" as StaticString) }

    /// Writes `"key": ` for a member of an object, after `separator` unless it is the first member.
    package mutating func key(_ key: StaticString, first: inout Bool) {
        if !first { raw(comma) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        bytes.append(UInt8(ascii: "\""))
        raw(colon)
    }

    /// A key that is not a literal (an unknown one kept from the file).
    package mutating func key(_ key: String, first: inout Bool) {
        if !first { raw(comma) }
        first = false
        string(key)
        raw(colon)
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                hex[Int(byte & 0xF)],
            ])
        default: bytes.append(byte)
        }
    }
}
