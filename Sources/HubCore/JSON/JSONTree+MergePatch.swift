import Foundation

/// JSON Merge Patch (RFC 7396) between two trees, and the trees of `Codable` values: what a log line writes when a
/// value it holds changed in a few members (the alert book's lines, `AlertBook.Change`), without a second list of the
/// value's members to keep in step with its type.
extension JSONTree {
    /// The tree of `value` as `JSONEncoder` writes it.
    public init(encoding value: some Encodable) throws {
        self = try JSONTree.parse(Array(JSONEncoder().encode(value)))
    }

    /// The value this tree is the JSON of.
    public func decoded<Value: Decodable>(as type: Value.Type) throws -> Value {
        var writer = JSONWriter(compact: true)
        write(into: &writer)
        return try JSONDecoder().decode(type, from: Data(writer.bytes))
    }

    /// The patch that turns `old` into `new`: the members of `new` that differ (a member that is an object in both
    /// as its own patch), and `null` for each member `new` no longer has. Nil when `new` holds a `null` member,
    /// which a merge patch can't say (it means "remove"): the caller writes `new` whole.
    public static func mergePatch(from old: JSONTree, to new: JSONTree) -> JSONTree? {
        guard case .object(let before) = old, case .object(let after) = new else {
            return new.holdsNull ? nil : new
        }
        var members: [Member] = []
        for member in after where member.value != old[member.key] {
            guard let previous = old[member.key], case .object = previous, case .object = member.value else {
                if member.value.holdsNull { return nil }
                members.append(member)
                continue
            }
            guard let patch = mergePatch(from: previous, to: member.value) else { return nil }
            members.append(Member(key: member.key, value: patch))
        }
        for member in before where new[member.key] == nil { members.append(Member(key: member.key, value: .null)) }
        return .object(members)
    }

    /// This tree with `patch` merged into it (RFC 7396 §2).
    public func merging(_ patch: JSONTree) -> JSONTree {
        guard case .object(let changes) = patch else { return patch }
        var members: [Member]
        if case .object(let own) = self { members = own } else { members = [] }
        for change in changes {
            let index = members.firstIndex { $0.key == change.key }
            if case .null = change.value {
                if let index { members.remove(at: index) }
            } else if let index {
                members[index].value = members[index].value.merging(change.value)
            } else {
                members.append(Member(key: change.key, value: JSONTree.null.merging(change.value)))
            }
        }
        return .object(members)
    }

    /// Whether a `null` is in it, at any depth.
    private var holdsNull: Bool {
        switch self {
        case .null: true
        case .array(let elements): elements.contains { $0.holdsNull }
        case .object(let members): members.contains { $0.value.holdsNull }
        default: false
        }
    }

    /// Writes the tree as JSON.
    package func write(into writer: inout JSONWriter) {
        switch self {
        case .null: writer.raw("null" as StaticString)
        case .bool(let value): writer.raw(value ? "true" as StaticString : "false")
        case .number(let value, _): writer.number(value)
        case .string(let value): writer.string(value)
        case .array(let elements):
            writer.raw("[" as StaticString)
            for (index, element) in elements.enumerated() {
                if index > 0 { writer.raw("," as StaticString) }
                element.write(into: &writer)
            }
            writer.raw("]" as StaticString)
        case .object(let members):
            writer.raw("{" as StaticString)
            var first = true
            for member in members {
                writer.key(member.key, first: &first)
                member.value.write(into: &writer)
            }
            writer.raw("}" as StaticString)
        }
    }
}

/// A tree inside a `Codable` value (a patch in a log line).
extension JSONTree: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let elements = try? container.decode([JSONTree].self) {
            self = .array(elements)
        } else {
            let members = try container.decode([String: JSONTree].self)
            // A dictionary has no order: by key, so that a tree read twice is the same.
            self = .object(members.sorted { $0.key < $1.key }.map { Member(key: $0.key, value: $0.value) })
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value, _):
            // JSONEncoder writes an integral value without a fraction (21, not 21.0), as JSONWriter does.
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            for member in members { try container.encode(member.value, forKey: Key(stringValue: member.key)) }
        }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
