import Foundation
import HubSupport

/// A named sensor in the registry.
public struct Sensor: Sendable, Hashable {
    /// The status a sensor shows until its first message.
    public static let waiting = "Waiting"

    /// Stays the same for the sensor's life, whatever its name or topic become (12 hex digits). Event ids are made
    /// from it; an empty one is given by the document the sensor joins.
    public internal(set) var id: String
    /// The sequence number of the sensor's last event: its next event is `sequence + 1`, so an event derived
    /// again (a replay after a crash) gets the same id.
    public var sequence: Int
    /// The name as the user gave it (trimmed, Unicode-normalised).
    public var name: String
    /// The MQTT topic its firmware publishes to.
    public var topic: String
    /// The last status received, or `Waiting`.
    public var status: String
    /// When the last status arrived; `nil` until the first one.
    public var lastUpdated: Timestamp?
    /// When it was added to the registry.
    public var added: Timestamp
    /// What its messages carry.
    public var kind: SensorKind
    /// How long it may stay silent before it counts as offline; `nil` for the hub's default.
    public var silenceTimeout: Duration?
    /// What a plain status sensor never uses, out of line: a registry of 100,000 sensors holds 100,000 of these
    /// structs, and each of these fields inline would cost every one of them.
    var extras = Extras.none

    struct Extras: Sendable, Hashable {
        var format = ValueFormat()
        var availability: String?
        var attributes: SensorAttributes = []
        var alerts: [String] = []
        var statusBeforeOffline: String?
        var session: OpenSession?
        var unknownFields = UnknownFields()

        /// Whether any field differs from a new sensor's: only then does a sensor need a box of its own.
        var isUsed: Bool { self != Extras() }

        /// The one box every sensor starts with (shared, so it costs nothing until a sensor changes it).
        static let none = OutOfLine(Extras())
    }

    /// How its status is read from what its device publishes (empty: the payload is the status).
    public var format: ValueFormat {
        get { extras.value.format }
        set { extras.set(\.format, to: newValue) }
        _modify { yield &extras.value.format }
    }
    /// The topic where its device says `online` or `offline` (Zigbee2MQTT's `…/availability`, Tasmota's LWT).
    public var availability: String? {
        get { extras.value.availability }
        set { extras.set(\.availability, to: newValue) }
        _modify { yield &extras.value.availability }
    }
    /// The other fields of its last payload (battery, link quality…).
    public var attributes: SensorAttributes {
        get { extras.value.attributes }
        set { extras.set(\.attributes, to: newValue) }
        _modify { yield &extras.value.attributes }
    }
    /// The thresholds it is past now (their names): after a restart each clears once, and does not alert again.
    public var alerts: [String] {
        get { extras.value.alerts }
        set { extras.set(\.alerts, to: newValue) }
        _modify { yield &extras.value.alerts }
    }
    /// While it is offline: the status it had before, which `online` brings back (after a restart too).
    public var statusBeforeOffline: String? {
        get { extras.value.statusBeforeOffline }
        set { extras.set(\.statusBeforeOffline, to: newValue) }
        _modify { yield &extras.value.statusBeforeOffline }
    }
    /// A mobile sensor's recording session while one is open.
    public var session: OpenSession? {
        get { extras.value.session }
        set { extras.set(\.session, to: newValue) }
        _modify { yield &extras.value.session }
    }
    /// Keys this version does not know, kept as they were.
    var unknownFields: UnknownFields {
        get { extras.value.unknownFields }
        set { extras.set(\.unknownFields, to: newValue) }
        _modify { yield &extras.value.unknownFields }
    }

    public init(
        name: String,
        topic: String,
        status: String = Sensor.waiting,
        lastUpdated: Timestamp? = nil,
        added: Timestamp,
        kind: SensorKind = .status,
        silenceTimeout: Duration? = nil,
        id: String = "",
        sequence: Int = 0,
        format: ValueFormat = ValueFormat(),
        availability: String? = nil,
        attributes: SensorAttributes = []
    ) {
        self.id = id
        self.sequence = sequence
        self.name = name
        self.topic = topic
        self.status = status
        self.lastUpdated = lastUpdated
        self.added = added
        self.kind = kind
        self.silenceTimeout = silenceTimeout
        // One comparison, and a box only for a sensor that uses one of them (not a set through each field's setter:
        // this runs for every sensor of a registry read).
        var extras = Extras()
        extras.format = format
        extras.availability = availability
        extras.attributes = attributes
        if extras.isUsed { self.extras = OutOfLine(extras) }
    }
}

extension Sensor {
    /// A numeric sensor's value: its status (the number as it shows it) read back, or with bands its `value`
    /// attribute (the status is the band); `nil` while it waits for its first value or is offline, and for the
    /// other kinds.
    public var value: Double? {
        guard kind == .numeric, status != "offline" else { return nil }
        if format.bands != nil {
            guard case .number(let number)? = attributes[ValueBands.valueAttribute], lastUpdated != nil else {
                return nil
            }
            return number
        }
        guard let number = Double(status), number.isFinite else { return nil }
        return number
    }
}

/// Sensor ids: random for a new sensor, derived from what never changes for one a registry written before ids
/// existed holds, so every reader of such a file gives it the same id until one of them writes it.
enum SensorID {
    /// A random id not in `taken`.
    static func random(avoiding taken: (String) -> Bool) -> String {
        while true {
            let id = hex(UInt64.random(in: 0...UInt64.max))
            if !taken(id) { return id }
        }
    }

    /// The id of a sensor stored without one: from its topic (unique in a registry) and when it was added.
    static func derived(topic: String, added: Timestamp) -> String {
        var hash = StableHash()
        hash.add(topic.utf8)
        hash.add(0)
        hash.add(added.description.utf8)
        return hex(hash.value)
    }

    private static func hex(_ value: UInt64) -> String {
        let text = String(value & 0xFFFF_FFFF_FFFF, radix: 16)
        return String(repeating: "0", count: 12 - text.count) + text
    }

    /// Whether `id` has the form ids have: 12 lowercase hex digits.
    static func isValid(_ id: String) -> Bool {
        id.utf8.count == 12 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// What a sensor's messages carry. A struct over a string: a newer hub may know kinds this one does not.
public struct SensorKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A plain status string ("open", "closed", "alarm").
    public static let status = SensorKind(rawValue: "status")
    /// Particulate readings (PM2.5 / PM10), such as an SDS011's.
    public static let particulate = SensorKind(rawValue: "particulate")
    /// A number with a unit (a temperature, a humidity): its readings go to the history, and only thresholds,
    /// silence and availability make events, not every new value.
    public static let numeric = SensorKind(rawValue: "numeric")

    public static let known: [SensorKind] = [.status, .numeric, .particulate]
    public var description: String { rawValue }
}

/// Members of a JSON object this version does not interpret, in their original order and bytes.
struct UnknownFields: Sendable, Hashable {
    var members: [(key: String, value: RawJSON)] = []

    static func == (lhs: UnknownFields, rhs: UnknownFields) -> Bool {
        lhs.members.map(\.key) == rhs.members.map(\.key) && lhs.members.map(\.value) == rhs.members.map(\.value)
    }

    func hash(into hasher: inout Hasher) {
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }

    var isEmpty: Bool { members.isEmpty }
}

/// The rules for sensor names and topics, and the messages that explain a broken one.
public enum SensorRules {
    /// Names have at most this many characters.
    public static let maximumNameLength = 64

    /// A valid name from what a user typed: trimmed and Unicode-normalised (NFC), or an error saying what is wrong.
    public static func name(_ raw: String) throws(RegistryError) -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !name.isEmpty else { throw .invalidName(raw, "a sensor name can't be empty") }
        if name.count > maximumNameLength {
            throw .invalidName(name, "it is \(name.count) characters long; names have at most \(maximumNameLength)")
        }
        if name.hasPrefix("$") {
            throw .invalidName(name, "names can't start with '$', which MQTT reserves for the broker's own topics")
        }
        if let problem = UnsafeText.problem(in: name) { throw .invalidName(name, "it " + problem) }
        for scalar in name.unicodeScalars where !isAllowed(scalar) {
            switch scalar {
            case "/": throw .invalidName(name, "'/' separates MQTT topic levels and can't be part of a name")
            case "+", "#": throw .invalidName(name, "'\(scalar)' is an MQTT wildcard and can't be part of a name")
            default:
                throw .invalidName(
                    name, "'\(scalar)' can't be part of a name; use letters, digits, spaces, '-', '_' and '.'")
            }
        }
        return name
    }

    /// What is wrong with a name read from the store, or `nil`: it must be what `name(_:)` makes of itself.
    /// Plain ASCII names (the common case) are checked byte by byte, fast enough for 100,000 of them.
    static func problem(withStoredName name: String) -> String? {
        let utf8 = name.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) {
            let allowed = utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: "."):
                    true
                default: false
                }
            }
            if allowed, !utf8.isEmpty, utf8.count <= maximumNameLength, utf8.first != UInt8(ascii: " "),
                utf8.last != UInt8(ascii: " ")
            {
                return nil
            }
        }
        do {
            let normalised = try Self.name(name)
            return normalised == name ? nil : "is not in its normal form (expected '\(normalised)')"
        } catch {
            if case .invalidName(_, let reason) = error { return "is not a valid sensor name: \(reason)" }
            return "\(error)"
        }
    }

    /// The name among `names` closest to `name` (for "did you mean …?"), if one is close enough.
    public static func closest(to name: String, among names: some Sequence<String>) -> String? {
        let target = Array(key(name))
        var best: (name: String, distance: Int)?
        for candidate in names {
            let other = Array(key(candidate))
            guard abs(other.count - target.count) <= 2 else { continue }
            let distance = editDistance(target, other)
            if distance <= max(1, target.count / 4), distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// Levenshtein distance between two character arrays.
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The key that makes names unique regardless of case ("Kitchen" and "kitchen" are one sensor).
    public static func key(_ name: String) -> String { name.lowercased() }

    /// A valid topic, or an error saying what is wrong. MQTT allows control and formatting characters in topics;
    /// the hub refuses them, because its topics are shown in terminals, logs and the dashboard.
    public static func topic(_ topic: String) throws(RegistryError) -> String {
        if let problem = TopicRules.problemWithPublishTopic(topic) { throw .invalidTopic(topic, problem) }
        if let problem = UnsafeText.problem(in: topic) { throw .invalidTopic(topic, "it " + problem) }
        if topic.hasPrefix("$") {
            throw .invalidTopic(topic, "topics starting with '$' are reserved for the broker")
        }
        return topic
    }

    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case " ", "-", "_", ".": return true
        default: break
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber:
            // Marks belong to letters in many scripts (Devanagari vowel signs, for one).
            return true
        default:
            return false
        }
    }
}

/// How a sensor's topic follows from its name: `{name}` is replaced by the name (default: the topic *is* the
/// name, as the original firmware published).
public struct TopicTemplate: Sendable, Hashable, CustomStringConvertible {
    public static let placeholder = "{name}"
    public static let `default` = TopicTemplate(unchecked: placeholder)

    public let pattern: String

    private init(unchecked pattern: String) { self.pattern = pattern }

    /// A template that contains `{name}` once and yields valid topics.
    public init(_ pattern: String) throws(RegistryError) {
        let occurrences = pattern.components(separatedBy: Self.placeholder).count - 1
        guard occurrences == 1 else {
            throw .invalidTopicTemplate(pattern, "it must contain \(Self.placeholder) exactly once")
        }
        do {
            _ = try SensorRules.topic(pattern.replacingOccurrences(of: Self.placeholder, with: "x"))
        } catch {
            throw .invalidTopicTemplate(pattern, "\(error)")
        }
        self.pattern = pattern
    }

    /// The topic for a sensor called `name`.
    public func topic(for name: String) throws(RegistryError) -> String {
        try SensorRules.topic(pattern.replacingOccurrences(of: Self.placeholder, with: name))
    }

    public var description: String { pattern }
}

extension Sequence<Sensor> {
    /// Sorted by name as people read names: case-insensitively, and numbers by their value ("room 2" before
    /// "room 10"). The order of `hubctl sensors list`, the API and the dashboard.
    public func sortedByName() -> [Sensor] {
        map { (Array(SensorRules.key($0.name).unicodeScalars), $0) }
            .sorted { SensorRules.naturalOrder($0.0, $1.0) ?? ($0.1.name < $1.1.name) }
            .map(\.1)
    }
}

extension SensorRules {
    /// Whether `a` comes before `b`, runs of ASCII digits compared as numbers; `nil` when neither does ("s01" and
    /// "s1").
    static func naturalOrder(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Bool? {
        func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
        /// The run of digits from `start`, without its leading zeros, and where it ends.
        func number(_ scalars: [Unicode.Scalar], from start: Int) -> (digits: ArraySlice<Unicode.Scalar>, end: Int) {
            var first = start
            while first < scalars.count - 1, scalars[first] == "0", isDigit(scalars[first + 1]) { first += 1 }
            var end = first
            while end < scalars.count, isDigit(scalars[end]) { end += 1 }
            return (scalars[first..<end], end)
        }
        var i = 0
        var j = 0
        while i < a.count, j < b.count {
            if isDigit(a[i]), isDigit(b[j]) {
                let (x, xEnd) = number(a, from: i)
                let (y, yEnd) = number(b, from: j)
                if x.count != y.count { return x.count < y.count }
                if let (p, q) = zip(x, y).first(where: { $0 != $1 }) { return p.value < q.value }
                i = xEnd
                j = yEnd
            } else {
                if a[i] != b[j] { return a[i].value < b[j].value }
                i += 1
                j += 1
            }
        }
        let (restA, restB) = (a.count - i, b.count - j)
        return restA == restB ? nil : restA < restB
    }
}
