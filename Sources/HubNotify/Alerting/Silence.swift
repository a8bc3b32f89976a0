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
