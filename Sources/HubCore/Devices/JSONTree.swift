/// A parsed JSON payload with its members in the order the device sent them: what value paths are evaluated on and
/// attributes are taken from. Read with the store's validating `JSONReader` (duplicate keys, bad UTF-8 and nesting
/// past 256 levels are refused), not `JSONDecoder`, whose `Any`-free decoding of an unknown shape costs several
/// times as much per message.
public indirect enum JSONTree: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, and the digits after its decimal point as written (`22.0`: 1), for showing it as published; `nil`
    /// when written with an exponent or made here. Two numbers are equal when their values are.
    case number(Double, places: Int? = nil)
    case string(String)
    case array([JSONTree])
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONTree

        public init(key: String, value: JSONTree) {
            (self.key, self.value) = (key, value)
        }
    }

    /// Parses one JSON document.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONTree {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            var reader = JSONReader(buffer)
            let tree = try read(&reader)
            try reader.finish()
            return tree
        }
    }

    private static func read(_ reader: inout JSONReader) throws(JSONSyntaxError) -> JSONTree {
        if reader.nextIsString { return .string(try reader.readString()) }
        if reader.nextIsNumber {
            let start = reader.index
            let text = try reader.readNumberText()
            guard let number = Double(text) else { throw reader.error("this number can't be read", at: start) }
            return .number(number, places: ValueFormat.places(writtenIn: text))
        }
        if reader.nextIsNull {
            try reader.readNull()
            return .null
        }
        switch reader.nextKind {
        case "an object":
            var members: [Member] = []
            try reader.readObject { key, reader throws(JSONSyntaxError) in
                members.append(Member(key: key, value: try read(&reader)))
            }
            return .object(members)
        case "a list":
            var elements: [JSONTree] = []
            try reader.readArray { reader throws(JSONSyntaxError) in elements.append(try read(&reader)) }
            return .array(elements)
        default:
            return .bool(try reader.readBool())
        }
    }

    public static func == (a: JSONTree, b: JSONTree) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x, _), .number(let y, _)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x == y
        default: false
        }
    }

    /// The member called `key`, for an object.
    public subscript(key: String) -> JSONTree? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// What kind of value this is, for messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "true or false"
        case .number: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }
}
