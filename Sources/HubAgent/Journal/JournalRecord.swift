import Foundation
import HubCore

/// One applied change, as the journal keeps it: where a sensor's status now stands and the events that change
/// caused, durable together before anything else sees either.
public struct JournalRecord: Sendable, Hashable {
    /// Where it stands in the journal: increasing, given by `Journal.append`.
    public var position: Int
    public var topic: String
    /// The sensor's id: a record for a sensor removed since (another one on the topic now) changes nothing.
    public var sensorID: String
    public var status: String
    public var lastUpdated: Timestamp?
    /// The sensor's sequence number after the change (its last event's).
    public var sequence: Int
    /// None when only the last-updated time moved.
    public var events: [SensorEvent]
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
        events: [SensorEvent], attributes: SensorAttributes = [], alerts: [String] = [],
        statusBeforeOffline: String? = nil, session: OpenSession? = nil, position: Int = 0
    ) {
        self.session = session
        self.position = position
        self.topic = topic
        self.sensorID = sensorID
        self.status = status
        self.lastUpdated = lastUpdated
        self.sequence = sequence
        self.events = events
        self.attributes = attributes
        self.alerts = alerts
        self.statusBeforeOffline = statusBeforeOffline
    }

    /// The record as one journal line (without its newline), in the shape `Line` reads.
    var line: [UInt8] {
        var writer = JSONWriter(capacity: 200 + events.count * 200)
        var first = true
        writer.raw("{")
        writer.key("at", first: &first)
        writer.number(position)
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
        if !events.isEmpty {
            writer.key("events", first: &first)
            writer.raw("[")
            for (index, event) in events.enumerated() {
                if index > 0 { writer.raw(",") }
                event.write(into: &writer)
            }
            writer.raw("]")
        }
        writer.raw("}")
        return writer.bytes
    }

    /// A journal line: a record, or a consumer's acknowledgement (`{"ack":"router","through":41}`).
    struct Line: Decodable {
        var at: Int?
        var topic: String?
        var sensor: String?
        var status: String?
        var updated: Timestamp?
        var seq: Int?
        var events: [SensorEvent]?
        var attrs: String?
        var alerts: [String]?
        var before: String?
        var session: OpenSession?
        var ack: String?
        var through: Int?
        var delivered: [Int]?
        var digests: [String]?
        var anew: Bool?

        var record: JournalRecord? {
            guard let at, let topic, let sensor, let status, let seq else { return nil }
            return JournalRecord(
                topic: topic, sensorID: sensor, status: status, lastUpdated: updated, sequence: seq,
                events: events ?? [], attributes: attrs.flatMap(SensorAttributes.init(jsonText:)) ?? [],
                alerts: alerts ?? [], statusBeforeOffline: before, session: session, position: at)
        }
    }

    /// An acknowledgement line.
    static func ackLine(_ consumer: String, through position: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: 48)
        var first = true
        writer.raw("{")
        writer.key("ack", first: &first)
        writer.string(consumer)
        writer.key("through", first: &first)
        writer.number(position)
        writer.raw("}\n")
        return writer.bytes
    }
}

/// What takes the journal's records once they are durable: the registry's writer, the router, the history. Each
/// makes them durable in its own way and then says so with `Journal.acknowledge`, after which the journal may
/// forget them.
public protocol JournalConsumer: Sendable {
    /// Records now durable, in journal order; `position` is the last one's. Must not block.
    func accept(_ records: [JournalRecord], through position: Int)
    /// Whether it takes records once written, while their `fsync` runs, rather than after it (the router, so that a
    /// notification does not wait for the disk). Its acknowledgement must then wait for something that outlasts
    /// that `fsync` (the router's waits for the outbox's, a second later).
    var takesWrittenRecords: Bool { get }
}

extension JournalConsumer {
    public var takesWrittenRecords: Bool { false }
}

extension DefaultsDocument {
    /// Records where `record` leaves its sensor (replaying the journal at start, and the registry's writer).
    mutating func record(_ record: JournalRecord) {
        recordStatus(
            record.status, lastUpdated: record.lastUpdated, onTopic: record.topic, id: record.sensorID,
            sequence: record.sequence, attributes: record.attributes, alerts: record.alerts,
            statusBeforeOffline: .some(record.statusBeforeOffline), session: .some(record.session))
    }
}
