import Foundation

/// A mobile sensor's recording session while it is open: the registry keeps it (as the sensor's `session`), so a
/// session goes on across a restart of hubd, and a gap is measured from its last reading even then.
public struct OpenSession: Sendable, Hashable, Codable {
    /// The id of the `session` event that started it (`<sensor id>-<sequence>`).
    public var id: String
    public var started: Timestamp
    /// Its last reading's time; `started` until the first.
    public var last: Timestamp
    /// Started by a control message (`hubctl sessions start`, the API, the device), not by a reading: a gap does
    /// not end it, only a stop does.
    public var explicit: Bool

    public init(id: String, started: Timestamp, last: Timestamp? = nil, explicit: Bool = false) {
        self.id = id
        self.started = started
        self.last = last ?? started
        self.explicit = explicit
    }

    private enum CodingKeys: String, CodingKey { case id, started, last, explicit }

    /// Reads what `write(into:)` writes (the journal's and the status log's lines), which leaves `explicit` out when
    /// it is false. (The synthesized decoder required it: a journal line with a session started by a reading was
    /// unreadable, and skipped when replayed.)
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            started: try container.decode(Timestamp.self, forKey: .started),
            last: try container.decodeIfPresent(Timestamp.self, forKey: .last),
            explicit: try container.decodeIfPresent(Bool.self, forKey: .explicit) ?? false)
    }

    package func write(into writer: inout JSONWriter) {
        var first = true
        writer.raw("{")
        writer.key("id", first: &first)
        writer.string(id)
        writer.key("started", first: &first)
        writer.timestamp(started)
        writer.key("last", first: &first)
        writer.timestamp(last)
        if explicit {
            writer.key("explicit", first: &first)
            writer.raw("true")
        }
        writer.raw("}")
    }

    static func read(_ reader: inout JSONReader, at path: String) throws(JSONSyntaxError) -> OpenSession {
        let at = reader.index
        var id: String?
        var started: Timestamp?
        var last: Timestamp?
        var explicit = false
        try reader.readObject { key, reader throws(JSONSyntaxError) in
            switch key {
            case "id": id = try reader.string(at: "\(path).id")
            case "started": started = try reader.timestamp(at: "\(path).started")
            case "last": last = try reader.timestamp(at: "\(path).last")
            case "explicit": explicit = try reader.bool(at: "\(path).explicit")
            default: _ = try reader.readRaw()
            }
        }
        guard let id, !id.isEmpty, let started else {
            throw reader.error("\(path): expected an object with an id and a start time", at: at)
        }
        return OpenSession(id: id, started: started, last: last, explicit: explicit)
    }
}

/// How a sensor's readings are grouped into recording sessions (`sessions:` in hubd.yaml, matched by sensor name
/// like thresholds): a mobile sensor's readings belong to sessions, started and stopped by control messages or, with
/// a gap, started by the first reading and ended when none came for the gap.
public struct SessionRule: Sendable, Hashable {
    /// Names or globs (`walk*`), matched regardless of case.
    public var sensors: [String]
    /// `nil`: sessions only start and stop when told (`hubctl sessions start`, the API, the device's control
    /// message); readings outside one are kept without a session. Otherwise a reading with no session open starts
    /// one, and a session whose last reading is older than this ends.
    public var gap: Duration?

    public static let defaultGap = Duration.seconds(600)

    public init(sensors: [String], gap: Duration? = SessionRule.defaultGap) {
        self.sensors = sensors
        self.gap = gap
    }
}

extension SessionRule {
    /// `sessions:`: a list of `{sensors: [walk*], gap: 10m}`; `gap: manual` for sessions only started and stopped
    /// when told. A sensor takes the first rule naming it.
    public static func read(_ node: ConfigNode) throws(ConfigurationError) -> [SessionRule] {
        var rules: [SessionRule] = []
        for item in try node.list() {
            try item.allow(keys)
            guard let sensors = try item["sensors"].strings(), !sensors.isEmpty else {
                throw item.invalid("a sessions entry needs sensors: (names or globs of its mobile sensors)")
            }
            var rule = SessionRule(sensors: sensors)
            if try item["gap"].string()?.lowercased() == "manual" {
                rule.gap = nil
            } else if let gap = try item["gap"].duration(in: .seconds(1)...(.seconds(7 * 86_400))) {
                rule.gap = gap
            }
            rules.append(rule)
        }
        return rules
    }
}

/// A mobile sensor's recording state, as its `session` events say it.
public enum SessionState {
    public static let idle = "idle"
    public static let recording = "recording"
}

extension Timestamp {
    /// The time from this instant to `other` (negative when `other` is earlier).
    public func distance(to other: Timestamp) -> Duration {
        .milliseconds(other.millisecondsSince1970 - millisecondsSince1970)
    }
}
