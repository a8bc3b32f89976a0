import Foundation
import HubCore

/// One thing the remote store receives: a reading or an event (a session's start and end are events too), as the
/// queue keeps it on disk. Its `key` names it uniquely, the way the database's keys do, so a second copy is
/// recognised in the queue and ignored by the database.
public struct RemoteEntry: Sendable, Hashable, Codable {
    public var reading: Reading?
    public var event: SensorEvent?

    /// A reading, flat, as a `readings` row holds it.
    public struct Reading: Sendable, Hashable, Codable {
        public var sensor: String
        public var sensorID: String
        public var session: String?
        /// Milliseconds since 1970.
        public var time: Int64
        public var pm25: Double?
        public var pm10: Double?
        public var value: Double?
        public var unit: String?
        public var lat: Double?
        public var lon: Double?
        public var alt: Double?
        public var accuracy: Double?

        public init(_ recorded: RecordedReading) {
            sensor = recorded.sensor
            // A reading always has its sensor's id in hubd; the name stands in for one made without.
            sensorID = recorded.sensorID.isEmpty ? recorded.sensor : recorded.sensorID
            session = recorded.session
            time = recorded.reading.time.millisecondsSince1970
            switch recorded.reading {
            case .particulate(let reading):
                pm25 = reading.pm25
                pm10 = reading.pm10
            case .numeric(let number, let unit, _, _):
                value = number
                self.unit = unit
            }
            if let position = recorded.reading.position {
                lat = position.latitude
                lon = position.longitude
                alt = position.altitude
                accuracy = position.accuracy
            }
        }
    }

    public init(_ reading: RecordedReading) {
        self.reading = Reading(reading)
    }

    public init(_ event: SensorEvent) {
        self.event = event
    }

    /// `r/<sensor id>/<ms>` for a reading (a sensor has one reading per instant, as `UNIQUE(hub, sensor_id, time)`
    /// says), `e/<id>` for an event.
    public var key: String {
        if let reading { return "r/\(reading.sensorID)/\(reading.time)" }
        return "e/\(event?.id ?? "")"
    }

    /// The recording session it belongs to: a reading's, or the session a session event starts or ends.
    public var session: String? {
        if let reading { return reading.session }
        guard let event, event.kind == .session else { return nil }
        return event.sessionID
    }

    /// Whether it is the end of a recording session.
    public var endsSession: Bool { event?.isSessionEnd ?? false }
}

extension SensorEvent {
    /// The session a session event starts or ends: its value, or (a start without one) its own id.
    public var sessionID: String? {
        guard kind == .session else { return nil }
        if let value, !value.isEmpty { return value }
        return isSessionStart ? id : nil
    }

    /// `idle` → `recording`.
    public var isSessionStart: Bool { kind == .session && newStatus == "recording" }

    /// `recording` → `idle` (or anything that is not recording: the session is over).
    public var isSessionEnd: Bool { kind == .session && newStatus != "recording" }

    /// The sensor's id, the part of the event's id before its sequence number (`<sensor id>-<sequence>`).
    public var sensorID: String? {
        guard let dash = id.lastIndex(of: "-"), Int(id[id.index(after: dash)...]) != nil else { return nil }
        let prefix = String(id[..<dash])
        return prefix.isEmpty ? nil : prefix
    }
}
