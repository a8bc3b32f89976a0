import HubCore

// A record's reading (issue 55): the history commits a minute's rows at once to spare the SD card, so the readings
// wait in the journal with the status they came with, and a hubd that dies loses none of those it acknowledged.
extension RecordedReading {
    /// Its members as a journal line's `reading` object: the sensor's name (the history's rows are by name; the record
    /// has the id), the time in milliseconds unless it is `impliedTime` (the record's), the values, and a mobile
    /// sensor's session and position.
    func write(into writer: inout JSONWriter, impliedTime: Timestamp?) {
        var first = true
        writer.raw("{")
        writer.key("name", first: &first)
        writer.string(sensor)
        if reading.time != impliedTime {
            writer.key("ms", first: &first)
            writer.number(Int(reading.time.millisecondsSince1970))
        }
        switch reading {
        case .particulate(let particulate):
            Self.write("pm25", particulate.pm25, into: &writer, first: &first)
            Self.write("pm10", particulate.pm10, into: &writer, first: &first)
            if let device = particulate.device {
                writer.key("device", first: &first)
                writer.string(device)
            }
        case .numeric(let number, let unit, _, _):
            Self.write("value", number, into: &writer, first: &first)
            if let unit {
                writer.key("unit", first: &first)
                writer.string(unit)
            }
        }
        if let session {
            writer.key("session", first: &first)
            writer.string(session)
        }
        if let position = reading.position {
            Self.write("lat", position.latitude, into: &writer, first: &first)
            Self.write("lon", position.longitude, into: &writer, first: &first)
            Self.write("alt", position.altitude, into: &writer, first: &first)
            Self.write("accuracy", position.accuracy, into: &writer, first: &first)
        }
        writer.raw("}")
    }

    private static func write(_ key: StaticString, _ value: Double?, into writer: inout JSONWriter, first: inout Bool) {
        guard let value else { return }
        writer.key(key, first: &first)
        writer.number(value)
    }

    /// What `write(into:)` writes, read back.
    struct Wire: Decodable, Sendable {
        var name: String
        var ms: Int64?
        var pm25, pm10, value, lat, lon, alt, accuracy: Double?
        var device, unit, session: String?

        /// The reading of the sensor with `sensorID`, at `impliedTime` (its record's) unless it says when; `nil` for
        /// an object with neither kind's values, or with no time.
        func reading(sensorID: String, impliedTime: Timestamp?) -> RecordedReading? {
            guard let time = ms.map(Timestamp.init(millisecondsSince1970:)) ?? impliedTime else { return nil }
            let position = lat.flatMap { lat in lon.flatMap { GeoPoint(latitude: lat, longitude: $0) } }
                .map { GeoFix(point: $0, altitude: alt, accuracy: accuracy) }
            let reading: SensorReading
            if let value {
                reading = .numeric(value, unit: unit, time: time, position: position)
            } else if pm25 != nil || pm10 != nil {
                reading = .particulate(
                    ParticulateReading(pm25: pm25, pm10: pm10, time: time, device: device, position: position))
            } else {
                return nil
            }
            return RecordedReading(sensor: name, reading: reading, sensorID: sensorID, session: session)
        }
    }
}
