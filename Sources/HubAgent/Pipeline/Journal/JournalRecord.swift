import Foundation
import HubCore

/// One applied change, as the journal keeps it: where a sensor's status now stands (`statusUpdate`, whose members
/// read as the record's own: `record.status`) and the events that change caused, durable together before anything
/// else sees either.
@dynamicMemberLookup
public struct JournalRecord: Sendable, Hashable {
    /// Where it stands in the journal: increasing, given by `Journal.append`.
    public var position: Int
    /// Where the change leaves the sensor, as the registry records it.
    public var statusUpdate: SensorStatusUpdate
    /// None when only the last-updated time moved.
    public var events: [SensorEvent]
    /// The reading the message brought, for the history (which takes it from here, so that it is as durable as the
    /// status it came with).
    public var reading: RecordedReading?

    public subscript<Value>(dynamicMember member: WritableKeyPath<SensorStatusUpdate, Value>) -> Value {
        get { statusUpdate[keyPath: member] }
        set { statusUpdate[keyPath: member] = newValue }
    }

    public init(
        topic: String, sensorID: String, status: String, lastUpdated: Timestamp?, sequence: Int,
        events: [SensorEvent], attributes: SensorAttributes = [], alerts: [String] = [],
        statusBeforeOffline: String? = nil, session: OpenSession? = nil, position: Int = 0
    ) {
        self.init(
            SensorStatusUpdate(
                topic: topic, sensorID: sensorID, status: status, lastUpdated: lastUpdated, sequence: sequence,
                attributes: attributes, alerts: alerts, statusBeforeOffline: statusBeforeOffline, session: session),
            events: events, position: position)
    }

    /// A record of `update`, with the events that change caused.
    init(_ update: SensorStatusUpdate, events: [SensorEvent], reading: RecordedReading? = nil, position: Int) {
        self.statusUpdate = update
        self.events = events
        self.reading = reading
        self.position = position
    }

    /// The record as one journal line (without its newline), in the shape `Line` reads. What the status says already
    /// is not written again: an event's topic, new status, time and id (`SensorEvent.Implied`), the reading's time.
    var line: [UInt8] {
        var writer = JSONWriter(capacity: 200 + events.count * 200, compact: true)
        var first = true
        writer.raw("{")
        writer.key("at", first: &first)
        writer.number(position)
        statusUpdate.write(into: &writer, first: &first)
        if !events.isEmpty {
            let implied = statusUpdate.impliedEventMembers
            writer.key("events", first: &first)
            writer.raw("[")
            for (index, event) in events.enumerated() {
                if index > 0 { writer.raw(",") }
                event.write(into: &writer, implied: implied)
            }
            writer.raw("]")
        }
        if let reading {
            writer.key("reading", first: &first)
            reading.write(into: &writer, impliedTime: statusUpdate.lastUpdated)
        }
        writer.raw("}")
        return writer.bytes
    }

    /// A journal line: a record (its status members read by `SensorStatusUpdate.Wire`), or a consumer's
    /// acknowledgement (`{"ack":"router","through":41}`).
    struct Line: Decodable {
        var at: Int?
        var status: SensorStatusUpdate.Wire
        var events: [SensorEvent]?
        var reading: RecordedReading.Wire?
        var ack: String?
        var through: Int?
        var delivered: [Int]?
        var digests: [String]?
        var anew: Bool?

        private enum CodingKeys: String, CodingKey {
            case at, events, reading, ack, through, delivered, digests, anew
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try SensorStatusUpdate.Wire(from: decoder)
            at = try container.decodeIfPresent(Int.self, forKey: .at)
            if container.contains(.events) {
                // Each with what the record's status implies of it (lines written before leave nothing out).
                let implied = status.update?.impliedEventMembers
                var list = try container.nestedUnkeyedContainer(forKey: .events)
                var events: [SensorEvent] = []
                while !list.isAtEnd {
                    events.append(
                        try SensorEvent(
                            from: list.nestedContainer(keyedBy: SensorEvent.CodingKeys.self), implied: implied))
                }
                self.events = events
            }
            reading = try container.decodeIfPresent(RecordedReading.Wire.self, forKey: .reading)
            ack = try container.decodeIfPresent(String.self, forKey: .ack)
            through = try container.decodeIfPresent(Int.self, forKey: .through)
            delivered = try container.decodeIfPresent([Int].self, forKey: .delivered)
            digests = try container.decodeIfPresent([String].self, forKey: .digests)
            anew = try container.decodeIfPresent(Bool.self, forKey: .anew)
        }

        var record: JournalRecord? {
            guard let at, let update = status.update else { return nil }
            return JournalRecord(
                update, events: events ?? [],
                reading: reading?.reading(sensorID: update.sensorID, impliedTime: update.lastUpdated), position: at)
        }
    }

    /// An acknowledgement line.
    static func ackLine(_ consumer: String, through position: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: 48, compact: true)
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

extension SensorStatusUpdate {
    /// What a journal line with this status says of the events it carries: the sensor's topic, the status they
    /// changed it to, when, and the id the sensor's sequence gives an event.
    var impliedEventMembers: SensorEvent.Implied {
        SensorEvent.Implied(
            id: SensorEvent.id(sensor: sensorID, sequence: sequence), topic: topic, newStatus: status,
            time: lastUpdated)
    }
}

extension DefaultsDocument {
    /// Records where `record` leaves its sensor (replaying the journal at start, and the registry's writer).
    mutating func record(_ record: JournalRecord) {
        self.record(record.statusUpdate)
    }
}
