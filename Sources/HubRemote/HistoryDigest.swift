import Crypto
import HubCore
import Logging
import PostgresNIO

/// A checksum of a history's readings and events that does not depend on their order: how many, and the sum of every
/// row's SHA-256 (its first 8 bytes, wrapping), so that a copy read back from PostgreSQL can be compared with the
/// SQLite file it came from. The unit is left out (the file keeps it in the registry, not a row).
public struct HistoryDigest: Sendable, Equatable, CustomStringConvertible {
    public private(set) var readings = 0
    public private(set) var events = 0
    private var readingSum: UInt64 = 0
    private var eventSum: UInt64 = 0

    public init() {}

    public mutating func add(_ entry: RemoteEntry) {
        if let reading = entry.reading {
            let fields: [String] = [
                reading.sensorID, reading.sensor, String(reading.time), text(reading.session), text(reading.pm25),
                text(reading.pm10), text(reading.value), text(reading.lat), text(reading.lon), text(reading.alt),
                text(reading.accuracy),
            ]
            readings += 1
            readingSum &+= Self.hash(fields)
        }
        if let event = entry.event {
            let fields: [String] = [
                event.id, event.sensor, event.topic, event.kind.rawValue, event.oldStatus, event.newStatus,
                String(event.time.millisecondsSince1970), text(event.value),
            ]
            events += 1
            eventSum &+= Self.hash(fields)
        }
    }

    /// `readings 1234 (9f…), events 56 (0a…)`
    public var description: String {
        "readings \(readings) (\(hex(readingSum))), events \(events) (\(hex(eventSum)))"
    }

    private func text<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "-" }
    private func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func hash(_ fields: [String]) -> UInt64 {
        let digest = SHA256.hash(data: Array(fields.joined(separator: "\u{1F}").utf8))
        return digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}

extension PostgresRemote {
    /// The digest of this hub's readings (of the sensors `sensorIDs`, from `readingsSince`) and events (from
    /// `eventsSince`), read back from the database.
    public func digest(sensorIDs: [String], readingsSince: Timestamp?, eventsSince: Timestamp?) async throws
        -> HistoryDigest
    {
        var digest = HistoryDigest()
        let hub = settings.hub
        if let readingsSince {
            let rows = try await connection.query(
                """
                SELECT sensor_id, sensor, (extract(epoch FROM time) * 1000)::bigint, session, pm25, pm10, value,
                    lat, lon, alt, accuracy
                FROM readings
                WHERE hub = \(hub) AND sensor_id = ANY(\(sensorIDs))
                    AND time >= 'epoch'::timestamptz + \(readingsSince.millisecondsSince1970)::bigint * interval '1 millisecond'
                """, logger: logger)
            for try await (id, sensor, time, session, pm25, pm10, value, lat, lon, alt, accuracy) in rows.decode(
                (String, String, Int64, String?, Double?, Double?, Double?, Double?, Double?, Double?, Double?).self)
            {
                let instant = Timestamp(millisecondsSince1970: time)
                var position: GeoFix?
                if let lat, let lon, let point = GeoPoint(latitude: lat, longitude: lon) {
                    position = GeoFix(point: point, altitude: alt, accuracy: accuracy)
                }
                let reading: SensorReading
                if let value {
                    reading = .numeric(value, unit: nil, time: instant, position: position)
                } else {
                    reading = .particulate(
                        ParticulateReading(pm25: pm25, pm10: pm10, time: instant, position: position))
                }
                digest.add(
                    RemoteEntry(RecordedReading(sensor: sensor, reading: reading, sensorID: id, session: session)))
            }
        }
        if let eventsSince {
            let rows = try await connection.query(
                """
                SELECT id, kind, sensor, topic, old, new, (extract(epoch FROM time) * 1000)::bigint, value
                FROM events
                WHERE hub = \(hub)
                    AND time >= 'epoch'::timestamptz + \(eventsSince.millisecondsSince1970)::bigint * interval '1 millisecond'
                """, logger: logger)
            for try await (id, kind, sensor, topic, old, new, time, value) in rows.decode(
                (String, String, String, String, String, String, Int64, String?).self)
            {
                digest.add(
                    RemoteEntry(
                        SensorEvent(
                            id: id, kind: SensorEvent.Kind(rawValue: kind), sensor: sensor, topic: topic,
                            oldStatus: old, newStatus: new, time: Timestamp(millisecondsSince1970: time),
                            value: value)))
            }
        }
        return digest
    }
}
