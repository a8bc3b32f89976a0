// What callers read by name: the next value's kind (for messages like "expected a string, found a number"), and
// typed values whose errors name the path they were read at.

extension JSONReader {
    /// What kind of value comes next, for messages like "expected a string, found a number".
    var nextKind: String {
        switch peek() {
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "a list"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "true or false"
        case UInt8(ascii: "n"): "null"
        case nil: "the end of the file"
        case let byte? where byte == UInt8(ascii: "-") || isDigit(byte): "a number"
        case let byte?: byte < 0x80 ? "'\(Character(Unicode.Scalar(byte)))'" : "a non-ASCII character"
        }
    }

    var nextIsNull: Bool { peek() == UInt8(ascii: "n") }
    var nextIsString: Bool { peek() == UInt8(ascii: "\"") }
    var nextIsNumber: Bool {
        guard let byte = peek() else { return false }
        return byte == UInt8(ascii: "-") || isDigit(byte)
    }

    /// An ISO 8601 time at `path`, or an error naming the path and what was found instead.
    mutating func timestamp(at path: @autoclosure () -> String) throws(JSONSyntaxError) -> Timestamp {
        let start = index
        guard nextIsString else { throw error("\(path()): expected a time, found \(nextKind)") }
        guard let time = try readTimestamp() else {
            throw error("\(path()): expected a time like 2026-11-22T10:03:00.000Z", at: start)
        }
        return time
    }

    /// A string at `path`, or an error naming the path and what was found instead.
    mutating func string(at path: @autoclosure () -> String) throws(JSONSyntaxError) -> String {
        guard nextIsString else { throw error("\(path()): expected a string, found \(nextKind)") }
        return try readString()
    }

    /// A string or null at `path`.
    mutating func optionalString(at path: @autoclosure () -> String) throws(JSONSyntaxError) -> String? {
        if nextIsNull {
            try readNull()
            return nil
        }
        return try string(at: path())
    }

    mutating func bool(at path: @autoclosure () -> String) throws(JSONSyntaxError) -> Bool {
        guard nextKind == "true or false" else { throw error("\(path()): expected true or false, found \(nextKind)") }
        return try readBool()
    }

    mutating func int(at path: @autoclosure () -> String) throws(JSONSyntaxError) -> Int {
        let start = index
        guard nextIsNumber else { throw error("\(path()): expected a whole number, found \(nextKind)") }
        guard let value = Int(try readNumberText()) else {
            throw error("\(path()): expected a whole number", at: start)
        }
        return value
    }

    /// A number or null at `path`.
    mutating func optionalDouble(at path: @autoclosure () -> String) throws(JSONSyntaxError) -> Double? {
        if nextIsNull {
            try readNull()
            return nil
        }
        let start = index
        guard nextIsNumber else { throw error("\(path()): expected a number, found \(nextKind)") }
        guard let value = Double(try readNumberText()) else { throw error("\(path()): expected a number", at: start) }
        return value
    }
}
