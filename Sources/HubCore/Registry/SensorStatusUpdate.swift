import Foundation
import HubSupport

/// Where one sensor stands after a change hubd saw: its status and what goes with it. The journal keeps one in each
/// record; the registry's writer hands them to the store (`RegistryStore.recordStatuses`), and the file store appends
/// them to its status log (`DefaultsStore.record`). One JSON shape for both, written by `write(into:first:)` and read
/// by `Wire`.
public struct SensorStatusUpdate: Sendable, Hashable {
    public var topic: String
    /// The sensor's id: an update for a sensor removed since (another one on the topic now) changes nothing.
    public var sensorID: String
    public var status: String
    public var lastUpdated: Timestamp?
    /// The sensor's sequence number after the change: an update older than what the registry holds is ignored.
    public var sequence: Int
    /// The other fields of the device's last payload.
    public var attributes: SensorAttributes
    /// The thresholds the sensor is past now.
    public var alerts: [String]
    /// While it is offline, the status it had before.
    public var statusBeforeOffline: String?
    /// A mobile sensor's open recording session.
    public var session: OpenSession?

    public init(
        topic: String, sensorID: String, status: String, lastUpdated: Timestamp?, sequence: Int,
        attributes: SensorAttributes = [], alerts: [String] = [], statusBeforeOffline: String? = nil,
        session: OpenSession? = nil
    ) {
        self.topic = topic
        self.sensorID = sensorID
        self.status = status
        self.lastUpdated = lastUpdated
        self.sequence = sequence
        self.attributes = attributes
        self.alerts = alerts
        self.statusBeforeOffline = statusBeforeOffline
        self.session = session
    }

    /// Its members, into an object being written (the journal's record adds its own around them).
    package func write(into writer: inout JSONWriter, first: inout Bool) {
        writer.key("topic", first: &first)
        writer.string(topic)
        writer.key("sensor", first: &first)
        writer.string(sensorID)
        writer.key("status", first: &first)
        writer.string(status)
        if let lastUpdated {
            writer.key("updated", first: &first)
            writer.timestamp(lastUpdated)
        }
        writer.key("seq", first: &first)
        writer.number(sequence)
        if !attributes.isEmpty {
            writer.key("attrs", first: &first)
            writer.string(attributes.jsonText)
        }
        if !alerts.isEmpty {
            writer.key("alerts", first: &first)
            writer.strings(alerts)
        }
        if let statusBeforeOffline {
            writer.key("before", first: &first)
            writer.string(statusBeforeOffline)
        }
        if let session {
            writer.key("session", first: &first)
            session.write(into: &writer)
        }
    }

    /// The update as one line of the status log, with its newline.
    var line: [UInt8] {
        var writer = JSONWriter(capacity: 200, compact: true)
        var first = true
        writer.raw("{")
        write(into: &writer, first: &first)
        writer.raw("}\n")
        return writer.bytes
    }

    /// What `write(into:first:)` writes, read back; every member optional, since an object that holds them may hold
    /// other things (a journal line may be an acknowledgement).
    public struct Wire: Decodable, Sendable {
        var topic: String?
        var sensor: String?
        var status: String?
        var updated: Timestamp?
        var seq: Int?
        var attrs: String?
        var alerts: [String]?
        var before: String?
        var session: OpenSession?

        /// The update, when the object has one.
        public var update: SensorStatusUpdate? {
            guard let topic, let sensor, let status, let seq else { return nil }
            return SensorStatusUpdate(
                topic: topic, sensorID: sensor, status: status, lastUpdated: updated, sequence: seq,
                attributes: attrs.flatMap(SensorAttributes.init(jsonText:)) ?? [], alerts: alerts ?? [],
                statusBeforeOffline: before, session: session)
        }
    }
}

extension DefaultsDocument {
    /// Records where `update` leaves its sensor; false when no sensor with its id is on its topic any more.
    @discardableResult
    public mutating func record(_ update: SensorStatusUpdate) -> Bool {
        recordStatus(
            update.status, lastUpdated: update.lastUpdated, onTopic: update.topic, id: update.sensorID,
            sequence: update.sequence, attributes: update.attributes, alerts: update.alerts,
            statusBeforeOffline: .some(update.statusBeforeOffline), session: .some(update.session))
    }

    /// Applies a status log's complete lines in order (`DefaultsStore.statusLogPath`); a last line without its
    /// newline was torn by a crash while it was written, and is left out. A complete line that is not an update is an
    /// error naming its line: the log is left as it is.
    public mutating func replayStatusLog(_ bytes: [UInt8]) throws(JSONSyntaxError) {
        let decoder = JSONDecoder()
        var start = 0
        var line = 1
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            defer { (start, line) = (end + 1, line + 1) }
            guard end > start else { continue }
            let wire: SensorStatusUpdate.Wire
            do {
                wire = try decoder.decode(SensorStatusUpdate.Wire.self, from: Data(bytes[start..<end]))
            } catch {
                let text = String(decoding: bytes[start..<end].prefix(120), as: UTF8.self)
                throw JSONSyntaxError(message: "not a status update (\(error)): \(text)", line: line, column: 1)
            }
            guard let update = wire.update
            else {
                throw JSONSyntaxError(
                    message: "not a status update (a JSON object with topic, sensor, status and seq)", line: line,
                    column: 1)
            }
            record(update)
        }
    }
}
