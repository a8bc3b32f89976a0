import Foundation
import HubSupport

/// Something that happened to a sensor: a new status, its silence or return, an air-quality or threshold alert.
///
/// The hub's one event type: the tracker makes it, and the router, the outbox, the history and the API take it as
/// it is. Its Codable form is the `event` object of an outbox line.
public struct SensorEvent: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What happened; the names are the ones rules use in `events:`. A struct over a string, so a new kind breaks
    /// no caller.
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A new status.
        public static let changed = Kind(rawValue: "changed")
        /// Silent for longer than its timeout: now `offline`.
        public static let silent = Kind(rawValue: "silent")
        /// The firmware said `offline` (its last will, typically).
        public static let offline = Kind(rawValue: "offline")
        /// A message after `offline` (or after silence): back, with this status.
        public static let recovered = Kind(rawValue: "recovered")
        /// Air quality crossed the configured threshold (or came back below it).
        public static let airQuality = Kind(rawValue: "air_quality")
        /// A value or attribute crossed a configured threshold (`thresholds:`), or came back.
        public static let threshold = Kind(rawValue: "threshold")
        /// hubd's discovery added a sensor for a device it heard (`discovery:`); its value says which device.
        public static let discovered = Kind(rawValue: "discovered")
        /// `hubctl notify test`.
        public static let test = Kind(rawValue: "test")
        /// A mobile sensor's recording session started (`idle` → `recording`) or ended (`recording` → `idle`); its
        /// value is the session's id, which is the id of the event that started it.
        public static let session = Kind(rawValue: "session")
        /// A silence was added, ended early, or a snooze taken (the alert stage's announcement): not a sensor's
        /// event, so no rule chooses it; its `sensor` is the silence's matchers, its new status what happened.
        public static let silence = Kind(rawValue: "silence")

        public static let all: [Kind] = [
            .changed, .silent, .offline, .recovered, .airQuality, .threshold, .discovered, .test, .session,
        ]

        /// Whether a rule or a device that names no kinds takes it: every kind but a session's start and end, which
        /// are bookkeeping of a recording, not news about the air or a door. Name `session` to have them.
        public var isTakenByDefault: Bool { self != .session }
        public var description: String { rawValue }
    }

    /// `<sensor id>-<sequence>` for a sensor's events: an event derived again after a crash has the id it had, so
    /// receivers and the hub's own stores recognise it. Other events (a test) get a random one.
    public var id: String
    public var kind: Kind
    public var sensor: String
    public var topic: String
    public var oldStatus: String
    public var newStatus: String
    public var time: Timestamp
    /// What an air-quality event measured, in words ("PM2.5 27.4 µg/m³ (24 h mean) is above …").
    public var value: String?

    public init(
        id: String, kind: Kind, sensor: String, topic: String, oldStatus: String, newStatus: String, time: Timestamp,
        value: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.sensor = sensor
        self.topic = topic
        self.oldStatus = oldStatus
        self.newStatus = newStatus
        self.time = time
        self.value = value
    }

    public var description: String { "\(sensor): \(oldStatus) → \(newStatus) (\(kind.rawValue))" }

    /// The id of the `sequence`th event of the sensor whose id is `sensorID`.
    public static func id(sensor sensorID: String, sequence: Int) -> String { "\(sensorID)-\(sequence)" }

    /// A random id, for an event that belongs to no sensor's sequence (`hubctl notify test`).
    public static func randomID() -> String { UUID().uuidString.lowercased() }

    package enum CodingKeys: String, CodingKey {
        case id, kind, sensor, topic, oldStatus, newStatus, time, value
    }

    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder.container(keyedBy: CodingKeys.self), implied: nil)
    }

    /// An event read from `container`, where the members `implied` has may be left out (`writeFields`).
    package init(from container: KeyedDecodingContainer<CodingKeys>, implied: Implied?) throws {
        func member<T: Decodable>(_ key: CodingKeys, _ implied: T?) throws -> T {
            if let implied, !container.contains(key) { return implied }
            return try container.decode(T.self, forKey: key)
        }
        // Outboxes written before events had ids hold events without one.
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? implied?.id ?? ""
        kind = try container.decode(Kind.self, forKey: .kind)
        sensor = try container.decode(String.self, forKey: .sensor)
        topic = try member(.topic, implied?.topic)
        oldStatus = try container.decode(String.self, forKey: .oldStatus)
        newStatus = try member(.newStatus, implied?.newStatus)
        time = try member(.time, implied?.time)
        value = try container.decodeIfPresent(String.self, forKey: .value)
    }

    /// What the line an event is written in says already (a journal record: the sensor's topic, the status it
    /// changed to, when, and the id its sequence gives the event): the members equal to these are left out when the
    /// event is written (`writeFields`), and taken from here when it is read. A door's journal line was 283 bytes, of
    /// which these were 97.
    package struct Implied: Sendable {
        var id: String
        var topic: String
        var newStatus: String
        var time: Timestamp?

        package init(id: String, topic: String, newStatus: String, time: Timestamp?) {
            (self.id, self.topic, self.newStatus, self.time) = (id, topic, newStatus, time)
        }
    }
}

extension SensorEvent {
    /// What the event's fields are called in a JSON object: its Codable form, or the flat form receivers get.
    package struct FieldNames: Sendable {
        var kind: StaticString
        var oldStatus: StaticString
        var newStatus: StaticString
        /// Receivers get the event's id as the notification's `id`, so the event does not write it again.
        var includesID: Bool

        /// As Codable reads them: the `event` object of an outbox line.
        package static let codable = FieldNames(
            kind: "kind", oldStatus: "oldStatus", newStatus: "newStatus", includesID: true)
        /// As webhooks, files, commands and MQTT subscribers get them, beside the notification's own fields.
        package static let receivers = FieldNames(
            kind: "event", oldStatus: "old_status", newStatus: "status", includesID: false)
    }

    /// The event as its Codable form reads it (`id`, `kind`, `sensor`, `topic`, `oldStatus`, `newStatus`, `time`,
    /// `value`), written straight into `writer`: the outbox writes one per notification before its first attempt,
    /// where JSONEncoder was 15 % of hubd's time in the fan-out benchmark. A round-trip test keeps the two the same.
    /// Without the members `implied` has (`init(from:implied:)` reads them back from it).
    package func write(into writer: inout JSONWriter, implied: Implied? = nil) {
        var first = true
        writer.raw("{")
        writeFields(into: &writer, first: &first, names: .codable, implied: implied)
        writer.raw("}")
    }

    /// The event's fields as members of an object being written (the one place that lists them for the writer),
    /// but those equal to what `implied` has.
    package func writeFields(
        into writer: inout JSONWriter, first: inout Bool, names: FieldNames, implied: Implied? = nil
    ) {
        if names.includesID, id != implied?.id {
            writer.key("id", first: &first)
            writer.string(id)
        }
        writer.key(names.kind, first: &first)
        writer.string(kind.rawValue)
        writer.key("sensor", first: &first)
        writer.string(sensor)
        if topic != implied?.topic {
            writer.key("topic", first: &first)
            writer.string(topic)
        }
        writer.key(names.oldStatus, first: &first)
        writer.string(oldStatus)
        if newStatus != implied?.newStatus {
            writer.key(names.newStatus, first: &first)
            writer.string(newStatus)
        }
        if time != implied?.time {
            writer.key("time", first: &first)
            writer.timestamp(time)
        }
        if let value {
            writer.key("value", first: &first)
            writer.string(value)
        }
    }
}

extension SensorEvent {
    /// An event as the history shows it, for scripts: `hubctl events --json` and `/api/v1/events` write the same
    /// object (the table's and the CSV's columns, `detail` null when the event has none).
    public struct HistoryRow: Encodable, Sendable, Equatable {
        public var time: String
        public var sensor: String
        public var event: String
        public var from: String
        public var to: String
        public var detail: String?

        public init(_ event: SensorEvent) {
            time = event.time.iso8601
            sensor = event.sensor
            self.event = event.kind.rawValue
            from = event.oldStatus
            to = event.newStatus
            detail = event.value
        }

        private enum CodingKeys: String, CodingKey { case time, sensor, event, from, to, detail }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(time, forKey: .time)
            try container.encode(sensor, forKey: .sensor)
            try container.encode(event, forKey: .event)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
            if let detail {
                try container.encode(detail, forKey: .detail)
            } else {
                try container.encodeNil(forKey: .detail)
            }
        }
    }
}

extension SensorEvent {
    /// The events as CSV, `time,sensor,event,from,to,detail`: `hubctl events --csv` and
    /// `/api/v1/events?format=csv` (the events page's download).
    public static func csv(_ events: [SensorEvent]) -> String {
        var text = "time,sensor,event,from,to,detail\n"
        for row in events.map(SensorEvent.HistoryRow.init) {
            text +=
                [row.time, row.sensor, row.event, row.from, row.to, row.detail ?? ""].map(csvField)
                .joined(separator: ",") + "\n"
        }
        return text
    }

    /// A CSV field: control characters escaped (a device's text must not rewrite a terminal), quoted when it holds
    /// a comma, a quote or a line break.
    public static func csvField(_ raw: String) -> String {
        let text = UnsafeText.escaped(raw)
        return text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline })
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }
}
