// MARK: - Sensor by sensor

extension DefaultsDocument {
    /// A sensor as a store that keeps each sensor apart (PostgreSQL) holds it: the keys the registry's rules make
    /// unique, and its JSON object as `defaults.json` has it, so that reading it back is the file's own decoding with
    /// every check of it.
    public struct SensorRow: Sendable, Hashable {
        public let id: String
        /// The name as the registry compares names (case and normalisation folded).
        public let nameKey: String
        public let topic: String
        public let json: [UInt8]
    }

    /// Every sensor, in order.
    public func sensorRows() -> [SensorRow] {
        sensors.indices.map(row)
    }

    /// The sensors added or changed since the document was decoded (every sensor of a new one), in order.
    public func changedSensorRows() -> [SensorRow] {
        sensors.indices.compactMap { sourceRanges[$0] == nil ? row($0) : nil }
    }

    /// The sensor at `index`: the bytes it was read from when it is unchanged, else encoded.
    private func row(_ index: Int) -> SensorRow {
        let sensor = sensors[index]
        let json: [UInt8]
        if let range = sourceRanges[index] {
            json = Array(source[range])
        } else {
            var writer = JSONWriter(capacity: 192)
            sensor.encode(into: &writer)
            json = writer.bytes
        }
        return SensorRow(id: sensor.id, nameKey: SensorRules.key(sensor.name), topic: sensor.topic, json: json)
    }

    /// The ids of every sensor, to tell after a change which ones it removed.
    public var sensorIDs: Set<String> { Set(byID.keys) }

    /// A document from a header (`headerJSON`) and its sensors' JSON objects in order (`SensorRow.json`), checked as
    /// a file is; an unchanged sensor is written back as it was read.
    public static func decode(header: [UInt8], sensors: [[UInt8]]) throws(JSONSyntaxError) -> DefaultsDocument {
        let open = header.firstIndex(of: UInt8(ascii: "{")) ?? header.startIndex
        var bytes: [UInt8] = []
        bytes.reserveCapacity(header.count + 16 + sensors.reduce(0) { $0 + $1.count + 2 })
        bytes += Array("{\"sensors\": [".utf8)
        for (index, sensor) in sensors.enumerated() {
            if index > 0 { bytes += [UInt8(ascii: ","), UInt8(ascii: "\n")] }
            bytes += sensor
        }
        bytes += Array("],".utf8)
        bytes += header[(open + 1)...]
        return try decode(bytes)
    }
}
