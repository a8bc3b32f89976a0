/// Where a sensor's value sits in a JSON payload: `contact`, `AM2301.Temperature`, `temperature:0.tC`,
/// `readings[0].value`, `ZbReceived.*.Contact` (`*`: one key whatever it is), or an RFC 6901 JSON Pointer
/// (`/AM2301/Temperature`).
///
/// The dotted form: keys separated by `.`; `[n]` after a key (or at the start) picks element n of a list; a segment
/// that is only `*` matches any one key (or element), the first in the payload's order that leads to a value; `\`
/// takes the next character as it is (`a\.b` is the key `a.b`). A segment that is a whole number without a leading
/// zero (`0`, `12`) also picks a list element; on an object it is a key.
public struct ValuePath: Sendable, Hashable, CustomStringConvertible {
    /// One step down into the payload.
    public enum Segment: Sendable, Hashable {
        case key(String)
        case index(Int)
        case any
    }

    public let segments: [Segment]
    /// The path as it was written.
    public let description: String

    /// Parses a path; the error names the character where it goes wrong.
    public init(_ text: String) throws(ValuePathError) {
        description = text
        segments = text.hasPrefix("/") ? try Self.pointer(text) : try Self.dotted(text)
    }

    private static func pointer(_ text: String) throws(ValuePathError) -> [Segment] {
        var segments: [Segment] = []
        var position = 1
        for part in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var key = ""
            var characters = part.makeIterator()
            var offset = position
            while let character = characters.next() {
                offset += 1
                guard character == "~" else {
                    key.append(character)
                    continue
                }
                switch characters.next() {
                case "0": key.append("~")
                case "1": key.append("/")
                default:
                    throw ValuePathError(
                        path: text, position: offset, reason: "in a JSON Pointer '~' is written '~0' and '/' '~1'")
                }
                offset += 1
            }
            // "/0" may be a key "0" as well as an index: evaluation reads it by the value's type, as RFC 6901 does.
            segments.append(Self.index(key).map(Segment.index) ?? .key(key))
            position += part.count + 1
        }
        return segments
    }

    /// The list index `text` is: digits without a leading zero ("0", "12") that an `Int` holds. Anything else
    /// ("007", twenty digits) is a key: read as a number, it would look for a key that is not the one written.
    private static func index(_ text: some StringProtocol) -> Int? {
        guard let first = text.first, first != "0" || text.count == 1, text.allSatisfy(\.isASCIIDigitCharacter)
        else { return nil }
        return Int(text)
    }

    private static func dotted(_ text: String) throws(ValuePathError) -> [Segment] {
        let characters = Array(text)
        guard !characters.isEmpty else {
            throw ValuePathError(path: text, position: 1, reason: "a value path can't be empty")
        }
        var segments: [Segment] = []
        var i = 0
        func fail(_ reason: String, at index: Int) -> ValuePathError {
            ValuePathError(path: text, position: index + 1, reason: reason)
        }
        // One segment per loop: a key (or `*`), then any `[n]`, then '.' or the end.
        while true {
            var key = ""
            var escaped = false
            let start = i
            while i < characters.count, characters[i] != ".", characters[i] != "[" {
                if characters[i] == "]" { throw fail("']' without a '[' before it", at: i) }
                if characters[i] == "\\" {
                    i += 1
                    guard i < characters.count else { throw fail("'\\' at the end escapes nothing", at: i - 1) }
                    escaped = true
                }
                key.append(characters[i])
                i += 1
            }
            if key == "*" && !escaped {
                segments.append(.any)
            } else if !key.isEmpty {
                let index = escaped ? nil : Self.index(key)
                segments.append(index.map(Segment.index) ?? .key(key))
            } else if !(start == 0 && i < characters.count && characters[i] == "[") {
                // Only a path's start may go straight to an index ("[0].value"); "a..b" or "a.[0]" is a mistake.
                throw fail("a key is missing here", at: min(i, characters.count - 1))
            }
            while i < characters.count, characters[i] == "[" {
                let open = i
                i += 1
                var digits = ""
                while i < characters.count, characters[i] != "]" {
                    guard characters[i].isASCIIDigitCharacter else {
                        throw fail("a list index is a whole number, like [0]", at: i)
                    }
                    digits.append(characters[i])
                    i += 1
                }
                guard i < characters.count else { throw fail("this '[' is never closed", at: open) }
                guard let index = Int(digits) else { throw fail("a list index is a whole number, like [0]", at: open) }
                segments.append(.index(index))
                i += 1
            }
            guard i < characters.count else { return segments }
            guard characters[i] == "." else { throw fail("expected '.' or '[' after ']'", at: i) }
            i += 1
            guard i < characters.count else { throw fail("a path can't end with '.'", at: i - 1) }
        }
    }

    /// The value the path leads to in `tree`, and the concrete steps that led there (`*` replaced by the key it
    /// matched); `nil` when the payload has nothing there.
    public func find(in tree: JSONTree) -> (value: JSONTree, steps: [Segment])? {
        var steps: [Segment] = []
        steps.reserveCapacity(segments.count)
        guard let value = Self.find(segments[...], in: tree, steps: &steps) else { return nil }
        return (value, steps)
    }

    private static func find(_ rest: ArraySlice<Segment>, in tree: JSONTree, steps: inout [Segment]) -> JSONTree? {
        guard let segment = rest.first else { return tree }
        let next = rest.dropFirst()
        switch (segment, tree) {
        case (.key(let key), .object(let members)):
            guard let member = members.first(where: { $0.key == key }) else { return nil }
            steps.append(segment)
            if let found = find(next, in: member.value, steps: &steps) { return found }
            steps.removeLast()
        case (.index(let index), .array(let elements)):
            guard elements.indices.contains(index) else { return nil }
            steps.append(segment)
            if let found = find(next, in: elements[index], steps: &steps) { return found }
            steps.removeLast()
        case (.index(let index), .object):
            // "0" written as a segment is a key when the payload has an object there.
            return find([.key(String(index))] + next, in: tree, steps: &steps)
        case (.any, .object(let members)):
            for member in members {
                steps.append(.key(member.key))
                if let found = find(next, in: member.value, steps: &steps) { return found }
                steps.removeLast()
            }
        case (.any, .array(let elements)):
            for (index, element) in elements.enumerated() {
                steps.append(.index(index))
                if let found = find(next, in: element, steps: &steps) { return found }
                steps.removeLast()
            }
        default:
            break
        }
        return nil
    }

    /// `steps` as a dotted path: how attributes are named (`AM2301.Humidity`, `readings[1]`). Read back with
    /// `init(_:)`, it leads to the same value; a path with an empty key, which the dotted form can't write, is
    /// written as a JSON Pointer (`/a//b`).
    public static func text(of steps: some Collection<Segment>) -> String {
        if steps.contains(.key("")) { return pointer(of: steps) }
        var text = ""
        for step in steps {
            switch step {
            case .key(let key):
                if !text.isEmpty { text += "." }
                // A leading '/' would make the path a JSON Pointer.
                if text.isEmpty && key.hasPrefix("/") { text += "\\" }
                // Most keys need no escape (`battery`, `linkquality`): appended whole, not a character at a time.
                let plain = key.utf8.allSatisfy {
                    $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "[") && $0 != UInt8(ascii: "]")
                        && $0 != UInt8(ascii: "\\")
                }
                if plain {
                    text += key
                } else {
                    for character in key {
                        if character == "." || character == "[" || character == "]" || character == "\\" {
                            text += "\\"
                        }
                        text.append(character)
                    }
                }
                if key == "*" { text = String(text.dropLast()) + "\\*" }
            case .index(let index): text += "[\(index)]"
            case .any: text += text.isEmpty ? "*" : ".*"
            }
        }
        return text
    }

    /// `steps` as an RFC 6901 JSON Pointer (which has no `*`: concrete steps only).
    private static func pointer(of steps: some Collection<Segment>) -> String {
        var text = ""
        for step in steps {
            text += "/"
            switch step {
            case .key(let key):
                for character in key {
                    switch character {
                    case "~": text += "~0"
                    case "/": text += "~1"
                    default: text.append(character)
                    }
                }
            case .index(let index): text += String(index)
            case .any: text += "*"
            }
        }
        return text
    }
}

/// A value path, value map or format that can't be read: where and why.
public struct ValuePathError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    /// 1-based, in characters.
    public var position: Int
    public var reason: String

    public var description: String { "'\(path)', at character \(position): \(reason)" }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isWholeNumber }
}
