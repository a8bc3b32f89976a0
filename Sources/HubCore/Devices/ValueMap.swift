import HubSupport

/// What a device's values mean to people: `true=closed,false=open` (Zigbee2MQTT's `contact: true` is a closed
/// door), `ON=motion,OFF=clear`. Matched ignoring case; a value the map does not name is shown as it is.
public struct ValueMap: Sendable, Hashable, CustomStringConvertible {
    public struct Entry: Sendable, Hashable {
        public var from: String
        public var to: String
    }

    public let entries: [Entry]

    /// Parses `from=to` pairs separated by commas; the error names the character where it goes wrong.
    public init(_ text: String) throws(ValuePathError) {
        var entries: [Entry] = []
        var position = 1
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            func fail(_ reason: String, at offset: Int = 0) -> ValuePathError {
                ValuePathError(path: text, position: position + offset, reason: reason)
            }
            guard let equals = pair.firstIndex(of: "=") else {
                throw fail(pair.isEmpty ? "an entry is missing here" : "expected 'value=status', like true=closed")
            }
            let from = pair[..<equals].trimmingSpaces
            let to = pair[pair.index(after: equals)...].trimmingSpaces
            guard !from.isEmpty else { throw fail("the value before '=' is missing") }
            guard !to.isEmpty else {
                throw fail("the status after '=' is missing", at: pair.distance(from: pair.startIndex, to: equals))
            }
            if let problem = UnsafeText.problem(in: to) { throw fail("the status " + problem) }
            if entries.contains(where: { $0.from.lowercased() == from.lowercased() }) {
                throw fail("'\(from)' is mapped twice")
            }
            entries.append(Entry(from: from, to: to))
            position += pair.count + 1
        }
        self.entries = entries
    }

    /// The status `value` maps to, or `nil` when the map does not name it.
    public func status(for value: String) -> String? {
        for entry in entries where entry.from.count == value.count && entry.from.lowercased() == value.lowercased() {
            return entry.to
        }
        return nil
    }

    /// The statuses the map can give, in order (for a binary sensor: two).
    public var statuses: [String] { entries.map(\.to) }

    public var description: String { entries.map { "\($0.from)=\($0.to)" }.joined(separator: ",") }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
