/// A validating JSON reader over UTF-8 bytes that decodes what its caller asks for and hands back the raw bytes
/// of everything else, so a document can be rewritten with keys it does not know left exactly as they were.
///
/// Why not `JSONDecoder`: the defaults store holds up to 100,000 sensors (about 15 MB), and `hubctl sensors add`
/// must stay under 200 ms; Codable took 250–350 ms to decode and 200–300 ms to encode such a document here, and it
/// drops unknown keys. This reader decodes the same document in a few tens of milliseconds.
struct JSONReader {
    /// Nesting deeper than this is refused, so hostile input can't exhaust the stack.
    static let maximumDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var index: Int
    private var depth = 0

    /// Reads `bytes`, which must stay valid while the reader is used. Strings are checked to be valid UTF-8;
    /// any other non-ASCII byte is a syntax error anyway.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.index = 0
    }

    // MARK: Structure

    /// The keys of one object, read one at a time with `nextKey`; remembers them to refuse duplicates.
    struct ObjectCursor {
        fileprivate var seenFew: [String] = []
        fileprivate var seenMany = Set<String>()
        fileprivate var seenKnown: UInt64 = 0
        fileprivate var first = true
    }

    /// Keys a caller expects, matched against the raw bytes so that reading them creates no strings.
    struct KnownKeys: Sendable {
        fileprivate let keys: [[UInt8]]

        init(_ keys: [String]) {
            precondition(keys.count <= 64)
            self.keys = keys.map { Array($0.utf8) }
        }
    }

    /// A key: one of the known ones (by its position in `KnownKeys`), or any other.
    enum Key {
        case known(Int)
        case other(String)
    }

    /// The next key, as `nextKey(_:)` reads it, matching `known` keys without creating strings for them.
    mutating func nextKey(_ cursor: inout ObjectCursor, known: KnownKeys) throws(JSONSyntaxError) -> Key? {
        guard try advanceToKey(&cursor) else { return nil }
        let keyStart = index
        index += 1
        let contentStart = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
            bytes[index] >= 0x20, bytes[index] < 0x80
        {
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            let content = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
            for (position, key) in known.keys.enumerated() where key.count == content.count {
                guard key.elementsEqual(content) else { continue }
                let bit: UInt64 = 1 << position
                guard cursor.seenKnown & bit == 0 else {
                    throw error("the key \"\(String(decoding: key, as: UTF8.self))\" appears twice", at: keyStart)
                }
                cursor.seenKnown |= bit
                index += 1
                try afterKey()
                return .known(position)
            }
        }
        index = keyStart
        let key = try readString()
        try remember(key, &cursor, at: keyStart)
        try afterKey()
        return .other(key)
    }

    /// Starts reading an object.
    mutating func beginObject() throws(JSONSyntaxError) -> ObjectCursor {
        try enter("{", "an object")
        return ObjectCursor()
    }

    /// The next key of the object, with the reader positioned at its value (which the caller must consume), or
    /// `nil` at the object's end. Duplicate keys are an error: which one would count is anyone's guess.
    mutating func nextKey(_ cursor: inout ObjectCursor) throws(JSONSyntaxError) -> String? {
        guard try advanceToKey(&cursor) else { return nil }
        let keyStart = index
        let key = try readString()
        try remember(key, &cursor, at: keyStart)
        try afterKey()
        return key
    }

    /// Moves past the separator before the next key; false (with the object closed) at its end.
    private mutating func advanceToKey(_ cursor: inout ObjectCursor) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        if cursor.first {
            cursor.first = false
            if peek() == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return false
            }
        } else if peek() == UInt8(ascii: ",") {
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                throw error("a ',' must be followed by another key: JSON allows no trailing comma")
            }
        } else {
            try consume("}", "',' or '}' in an object")
            depth -= 1
            return false
        }
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
        return true
    }

    /// Refuses a key the object already had. A list for the few keys of an ordinary object, a set past that.
    private func remember(_ key: String, _ cursor: inout ObjectCursor, at keyStart: Int) throws(JSONSyntaxError) {
        let duplicate: Bool
        if cursor.seenFew.count < 16 {
            duplicate = cursor.seenFew.contains(key)
            cursor.seenFew.append(key)
            if cursor.seenFew.count == 16 { cursor.seenMany = Set(cursor.seenFew) }
        } else {
            duplicate = !cursor.seenMany.insert(key).inserted
        }
        guard !duplicate else { throw error("the key \"\(key)\" appears twice", at: keyStart) }
    }

    private mutating func afterKey() throws(JSONSyntaxError) {
        skipWhitespace()
        try consume(":", "':' after a key")
        skipWhitespace()
    }

    /// Reads an object, calling `body` for each key with the reader positioned at the key's value, which `body`
    /// must consume.
    mutating func readObject(_ body: (String, inout JSONReader) throws(JSONSyntaxError) -> Void)
        throws(JSONSyntaxError)
    {
        var cursor = try beginObject()
        while let key = try nextKey(&cursor) { try body(key, &self) }
    }

    /// Reads an array, calling `body` with the reader positioned at each element, which `body` must consume.
    mutating func readArray(_ body: (inout JSONReader) throws(JSONSyntaxError) -> Void) throws(JSONSyntaxError) {
        try enter("[", "a list")
        defer { depth -= 1 }
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try body(&self)
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    throw error("a ',' must be followed by another value: JSON allows no trailing comma")
                }
                continue
            }
            try consume("]", "',' or ']' in a list")
            return
        }
    }

    /// Checks the whole document was read: only whitespace may follow the top-level value.
    mutating func finish() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the end of the document") }
    }

    // MARK: Values

    mutating func readString() throws(JSONSyntaxError) -> String {
        let start = index
        try consume("\"", "a string")
        let contentStart = index
        var ascii = true
        // Fast path: no escapes, so the bytes are the string; only non-ASCII ones need checking as UTF-8.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: bytes[contentStart..<index])
                guard ascii || String(validating: content, as: UTF8.self) != nil else {
                    throw error("this string is not valid UTF-8", at: contentStart + firstInvalidUTF8(content)!)
                }
                index += 1
                return String(decoding: content, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character inside a string must be escaped") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        var decoded = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: decoded, as: UTF8.self) else {
                    throw error("this string is not valid UTF-8", at: start)
                }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try readEscape(into: &decoded)
            case 0..<0x20:
                throw error("a control character inside a string must be escaped")
            default:
                decoded.append(byte)
                index += 1
            }
        }
        throw error("this string is never closed", at: start)
    }

    /// Reads a string holding an ISO 8601 time, straight from the bytes; `nil` when the text is not one.
    mutating func readTimestamp() throws(JSONSyntaxError) -> Timestamp? {
        let start = index
        try consume("\"", "a string")
        let contentStart = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            // Escapes inside a time are unusual but legal JSON: take the general path.
            index = start
            return Timestamp(iso8601: try readString())
        }
        let timestamp = Timestamp(utf8: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        index += 1
        return timestamp
    }

    mutating func readBool() throws(JSONSyntaxError) -> Bool {
        if try literal("true") { return true }
        if try literal("false") { return false }
        if nextKind == "true or false" { throw error("this is not true, false or null (JSON's words are lower case)") }
        throw error("expected true or false, found \(nextKind)")
    }

    mutating func readNull() throws(JSONSyntaxError) {
        guard try literal("null") else {
            if nextIsNull { throw error("this is not true, false or null (JSON's words are lower case)") }
            throw error("expected null, found \(nextKind)")
        }
    }

    /// Reads a number and returns its text (validated against JSON's grammar).
    mutating func readNumberText() throws(JSONSyntaxError) -> String {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a number, found \(nextKind)", at: start) }
        index += 1
        if first != UInt8(ascii: "0") { while let byte = peek(), isDigit(byte) { index += 1 } }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek(), isDigit(byte) else { throw error("expected a digit after '.'") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek(), isDigit(byte) else { throw error("expected a digit in the exponent") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Validates any value and returns its raw bytes, to be written back unchanged.
    mutating func readRaw() throws(JSONSyntaxError) -> RawJSON {
        let start = index
        try skipValue()
        return RawJSON(bytes: Array(UnsafeBufferPointer(rebasing: bytes[start..<index])))
    }

    mutating func skipValue() throws(JSONSyntaxError) {
        switch peek() {
        case UInt8(ascii: "{"): try readObject { _, reader throws(JSONSyntaxError) in try reader.skipValue() }
        case UInt8(ascii: "["): try readArray { reader throws(JSONSyntaxError) in try reader.skipValue() }
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
        case UInt8(ascii: "n"): try readNull()
        case nil: throw error("the document ends where a value should be")
        default: _ = try readNumberText()
        }
    }

    // MARK: Errors

    /// An error at `offset` (default: the current position), with its line and column.
    func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(message, at: min(offset ?? index, bytes.count), in: bytes)
    }

    // MARK: Bytes

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func consume(_ character: Unicode.Scalar, _ what: String) throws(JSONSyntaxError) {
        guard peek() == UInt8(ascii: character) else {
            throw error(peek() == nil ? "the document ends where \(what) should be" : "expected \(what)")
        }
        index += 1
    }

    private mutating func enter(_ character: Unicode.Scalar, _ what: String) throws(JSONSyntaxError) {
        guard peek() == UInt8(ascii: character) else { throw error("expected \(what), found \(nextKind)") }
        guard depth < Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels deep") }
        depth += 1
        index += 1
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func readEscape(into decoded: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = peek() else { throw error("the document ends inside an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(byte)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard try literal("\\u") else { throw error("a \\u surrogate pair is incomplete") }
                let low = try readHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("a \\u surrogate pair is invalid") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("a lone \\u surrogate is not a character")
            }
            decoded.append(contentsOf: Array(String(Unicode.Scalar(scalar)!).utf8))
        default:
            throw error("'\\\(Character(Unicode.Scalar(byte)))' is not a JSON escape")
        }
    }

    private mutating func readHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
