import Foundation
import HubCore
import HubSupport

/// A person's "not now" for some alerts: matchers, a start and an end, who and why (Alertmanager's silence).
///
/// A silence is never edited in place: changing one expires it and makes a new one, so what was silenced when can
/// always be read back.
public struct Silence: Sendable, Hashable, Codable {
    public var id: String
    public var matchers: [Matcher]
    public var startsAt: Timestamp
    public var endsAt: Timestamp
    public var createdBy: String
    public var comment: String

    public init(
        id: String, matchers: [Matcher], startsAt: Timestamp, endsAt: Timestamp, createdBy: String, comment: String
    ) {
        self.id = id
        self.matchers = matchers
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.createdBy = createdBy
        self.comment = comment
    }

    /// What a silence may be, so that nobody (a script gone wrong, a stranger with a stolen token) can silence the
    /// house for years or fill the book: documented in docs/alerts.md, each refusal names its limit.
    public enum Limits {
        /// Silences in force or to come, at once.
        public static let count = 100
        /// Matchers a silence.
        public static let matchers = 10
        /// Characters of a matcher's value, of the comment, and of who made it.
        public static let value = 200
        public static let comment = 500
        public static let author = 100
        /// The longest a silence may last: a long holiday.
        public static let longest: Int64 = 90 * 86_400_000
        /// How far ahead it may start, and how far back (a clock a little behind).
        public static let ahead: Int64 = 365 * 86_400_000
        public static let behind: Int64 = 5 * 60_000
    }

    /// Refuses, naming the limit, a silence no person should be able to make (`Limits`); `inForce` is how many
    /// silences are in force or to come already. Its start is judged against `now` when given (where it is asked;
    /// the book takes a request later, perhaps after a restart, and does not).
    public func check(inForce: Int, now: Timestamp?) throws(AlertInputError) {
        if inForce >= Limits.count {
            throw AlertInputError(
                "there are \(inForce) silences in force or to come, the most the hub keeps (\(Limits.count)): "
                    + "expire some first (hubctl silences list)")
        }
        guard !matchers.isEmpty, matchers.count <= Limits.matchers else {
            throw AlertInputError("a silence has 1 to \(Limits.matchers) matchers, not \(matchers.count)")
        }
        for matcher in matchers where matcher.value.count > Limits.value || matcher.name.count > Limits.value {
            throw AlertInputError(
                "the matcher '\(matcher.description.prefix(40))…' is longer than \(Limits.value) characters")
        }
        guard comment.count <= Limits.comment else {
            throw AlertInputError("the comment has \(comment.count) characters; at most \(Limits.comment)")
        }
        guard createdBy.count <= Limits.author else {
            throw AlertInputError("who made it (\(createdBy.count) characters) is at most \(Limits.author) characters")
        }
        if let now {
            guard startsAt.millisecondsSince1970 >= now.millisecondsSince1970 - Limits.behind else {
                throw AlertInputError(
                    "the silence would start at \(startsAt), in the past: leave the start out to begin now")
            }
            guard startsAt.millisecondsSince1970 <= now.millisecondsSince1970 + Limits.ahead else {
                throw AlertInputError("the silence would start at \(startsAt), more than 365 days ahead")
            }
            guard endsAt > now else { throw AlertInputError("the silence would end before now") }
        }
        guard endsAt > startsAt else { throw AlertInputError("the silence would end before it starts") }
        let length = endsAt.millisecondsSince1970 - startsAt.millisecondsSince1970
        guard length <= Limits.longest else {
            throw AlertInputError(
                "the silence would last \(length / 86_400_000) days; the longest is 90 days (a long holiday): "
                    + "make another when it ends")
        }
    }

    public enum State: String, Sendable, Codable {
        case pending, active, expired
    }

    public func state(at now: Timestamp) -> State {
        if now < startsAt { return .pending }
        return now < endsAt ? .active : .expired
    }

    /// Whether it silences an alert with these fields now.
    public func silences(_ fields: AlertFields, at now: Timestamp) -> Bool {
        state(at: now) == .active && matchers.allSatisfy { $0.matches(fields) }
    }

    /// One condition on an alert: `sensor=door*`, `kind!=offline`, `room=garage`.
    public struct Matcher: Sendable, Hashable, Codable, CustomStringConvertible {
        /// `sensor`, `kind`, `status`, `rule`, or a label or attribute of the sensor (`room`).
        public var name: String
        public var operation: Operation
        public var value: String

        public enum Operation: String, Sendable, Codable {
            /// Equal, or a glob when the value has `*`, `?` or `[`.
            case equal = "="
            case notEqual = "!="
        }

        public init(name: String, operation: Operation, value: String) {
            self.name = name
            self.operation = operation
            self.value = value
        }

        /// Reads `name=value`, `name!=value` (a value with `*`, `?` or `[` is a glob); a bare `door*` is a sensor.
        public init(parsing text: String) throws(AlertInputError) {
            // Alertmanager's regular-expression matchers: not supported, and refused rather than taken as a glob
            // that matches nothing.
            if text.contains("=~") || text.contains("!~") {
                throw AlertInputError(
                    "'\(text)': regular expressions (=~, !~) are not supported; use a glob: sensor=door*, "
                        + "sensor!=door-[0-9]")
            }
            let parts: (String, Operation, String)
            if let range = text.range(of: "!=") {
                parts = (String(text[..<range.lowerBound]), .notEqual, String(text[range.upperBound...]))
            } else if let range = text.range(of: "=") {
                parts = (String(text[..<range.lowerBound]), .equal, String(text[range.upperBound...]))
            } else {
                parts = ("sensor", .equal, text)
            }
            let name = parts.0.trimmingCharacters(in: .whitespaces).lowercased()
            let value = parts.2.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                throw AlertInputError("'\(text)': a matcher is name=value or name!=value (sensor=door*, kind=offline)")
            }
            guard !value.isEmpty else { throw AlertInputError("'\(text)': the matcher has no value") }
            if let mistake = globMistake(value) { throw AlertInputError("'\(text)': \(mistake)") }
            self.init(name: name, operation: parts.1, value: value)
        }

        public func matches(_ fields: AlertFields) -> Bool {
            let actual = fields[name] ?? ""
            let equal = glob(value, actual)
            return operation == .equal ? equal : !equal
        }

        public var description: String { "\(name)\(operation.rawValue)\(value)" }
    }
}

/// What matchers and `group_by` read of an alert: its rule, sensor, kind and status, and the sensor's labels.
public struct AlertFields: Sendable {
    public var rule: String
    public var sensor: String
    public var kind: String
    public var status: String
    public var labels: [String: String]

    public init(rule: String, sensor: String, kind: String, status: String, labels: [String: String] = [:]) {
        self.rule = rule
        self.sensor = sensor
        self.kind = kind
        self.status = status
        self.labels = labels
    }

    public subscript(name: String) -> String? {
        switch name {
        case "rule": rule
        case "sensor": sensor
        case "kind": kind
        case "status": status
        default: labels[name]
        }
    }
}

/// Input about alerts a person gave (a matcher, a silence's times) that can't be taken, and why.
public struct AlertInputError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Silence {
    /// Whether any of `sensors` could fall under it: its `sensor` matchers, and those on labels (from `facts`),
    /// checked against each sensor. `rule`, `kind` and `status` can't be known before an alert opens, and are taken to
    /// match. False: the silence holds nothing until such a sensor is added (said as a warning, not refused).
    public func mayMatch(anyOf sensors: [String], facts: (String) -> AlertBook.SensorFacts) -> Bool {
        let checked = matchers.filter { !["rule", "kind", "status"].contains($0.name) }
        guard !checked.isEmpty else { return true }
        return sensors.contains { sensor in
            let fields = AlertFields(rule: "", sensor: sensor, kind: "", status: "", labels: facts(sensor).labels)
            return checked.allSatisfy { $0.matches(fields) }
        }
    }

    /// The warning to give when no sensor falls under it, or nil.
    public func unmatchedWarning(sensors: [String], facts: (String) -> AlertBook.SensorFacts) -> String? {
        guard !mayMatch(anyOf: sensors, facts: facts) else { return nil }
        return "no sensor matches \(matchers.map(\.description).joined(separator: " ")) now: the silence holds "
            + "nothing until one does (hubctl sensors list)"
    }
}
