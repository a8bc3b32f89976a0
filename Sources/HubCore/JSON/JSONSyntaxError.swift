/// The raw bytes of a JSON value this program does not interpret, kept to be written back as they were.
public struct RawJSON: Sendable, Hashable {
    public var bytes: [UInt8]
}

/// Where and why a document is not the JSON it should be.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int

    public var description: String { "line \(line), column \(column): \(message)" }

    public init(message: String, line: Int, column: Int) {
        self.message = message
        self.line = line
        self.column = column
    }

    /// `message` at byte `offset` of `bytes`, with its line and column.
    init(_ message: String, at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        var line = 1
        var lineStart = 0
        for position in 0..<offset where bytes[position] == UInt8(ascii: "\n") {
            line += 1
            lineStart = position + 1
        }
        // Columns count characters, not bytes: continuation bytes of multi-byte UTF-8 don't start one.
        let column = 1 + (lineStart..<offset).filter { bytes[$0] & 0xC0 != 0x80 }.count
        self.init(message: message, line: line, column: column)
    }
}

/// The offset of the first byte in `bytes` that is not part of valid UTF-8, or `nil` when they all are.
func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    var index = 0
    while index < bytes.count {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00...0x7F: length = 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return index
        }
        guard index + length <= bytes.count else { return index }
        if String(validating: UnsafeBufferPointer(rebasing: bytes[index..<index + length]), as: UTF8.self) == nil {
            return index
        }
        index += length
    }
    return nil
}
