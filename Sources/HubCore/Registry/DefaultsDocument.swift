import Foundation
import HubSupport

/// The defaults store's document: keyed values like a defaults domain — the sensors, the broker settings, and
/// any key a newer version wrote, kept as it was.
///
/// ```json
/// {
///   "schemaVersion": 1,
///   "broker": {"host": "localhost", "port": 1883, "clientId": "sensorhub"},
///   "sensors": [
///     {"id": "3f9a0c1d2e4b", "name": "kitchen", "topic": "kitchen", "status": "open",
///      "lastUpdated": "2026-11-22T10:04:00.000Z", "added": "2026-11-22T10:03:00.000Z", "kind": "status", "sequence": 4}
///   ]
/// }
/// ```
public struct DefaultsDocument: Sendable, Hashable {
    /// The schema this version reads and writes.
    public static let currentSchemaVersion = 1

    public private(set) var schemaVersion: Int
    /// In the order they were added.
    public internal(set) var sensors: [Sensor]
    public var broker: BrokerSettings {
        didSet { if broker != oldValue { revision &+= 1 } }
    }
    /// Bumped by every change, so a writer knows whether there is anything to save without comparing documents.
    public private(set) var revision = 0
    /// Nothing to save: what it holds is what the store holds (the document with its status log replayed).
    mutating func markStored() { revision = 0 }
    var unknownFields: UnknownFields
    /// Sensor positions by name key and by topic: every change checks both, and must not look through them all.
    private var byName: [String: Int]
    private var byTopic: [String: Int]
    var byID: [String: Int] = [:]
    /// The bytes the document was read from, and where each unchanged sensor stands in them: writing copies
    /// those back byte for byte instead of encoding 100,000 sensors again.
    var source: [UInt8] = []
    var sourceRanges: [Range<Int>?] = []

    /// An empty registry, as on first use.
    public init() {
        schemaVersion = Self.currentSchemaVersion
        sensors = []
        broker = BrokerSettings()
        unknownFields = UnknownFields()
        byName = [:]
        byTopic = [:]
    }

    // MARK: Reading sensors

    /// The sensor called `name`, in any case.
    public func sensor(named name: String) -> Sensor? {
        byName[SensorRules.key(name.precomposedNFC)].map { sensors[$0] }
    }

    /// The sensor whose topic is `topic`.
    public func sensor(onTopic topic: String) -> Sensor? {
        byTopic[topic].map { sensors[$0] }
    }

    // MARK: Changing sensors

    /// Adds a sensor `Waiting` for its first message, on `topic` or the one `template` makes from its name.
    @discardableResult
    public mutating func addSensor(
        named rawName: String,
        topic explicitTopic: String? = nil,
        template: TopicTemplate = .default,
        kind: SensorKind = .status,
        silenceTimeout: Duration? = nil,
        format: ValueFormat = ValueFormat(),
        availability: String? = nil,
        at time: Timestamp = .now
    ) throws(RegistryError) -> Sensor {
        let name = try SensorRules.name(rawName)
        if let existing = sensor(named: name) { throw .duplicateName(new: name, existing: existing.name) }
        let topic: String
        if let explicitTopic {
            topic = try SensorRules.topic(explicitTopic)
        } else {
            topic = try template.topic(for: name)
        }
        if let user = sensor(onTopic: topic) { throw .duplicateTopic(topic: topic, sensor: user.name) }
        try checkAvailability(availability, of: topic)
        let id = SensorID.random { byID[$0] != nil }
        let sensor = Sensor(
            name: name, topic: topic, added: time, kind: kind, silenceTimeout: silenceTimeout, id: id, format: format,
            availability: availability)
        byName[SensorRules.key(name)] = sensors.count
        byTopic[topic] = sensors.count
        byID[id] = sensors.count
        sensors.append(sensor)
        sourceRanges.append(nil)
        revision &+= 1
        return sensor
    }

    /// Removes the sensor called `name` (in any case) and returns it.
    @discardableResult
    public mutating func removeSensor(named name: String) throws(RegistryError) -> Sensor {
        guard let index = byName[SensorRules.key(name.precomposedNFC)] else { throw unknown(name) }
        let removed = sensors.remove(at: index)
        sourceRanges.remove(at: index)
        reindex()
        revision &+= 1
        return removed
    }

    /// Renames a sensor. Its topic stays, because the firmware keeps publishing there, unless `retopic` asks for
    /// the one `template` makes from the new name.
    @discardableResult
    public mutating func renameSensor(
        _ oldName: String,
        to rawNewName: String,
        retopic template: TopicTemplate? = nil
    ) throws(RegistryError) -> Sensor {
        guard let index = byName[SensorRules.key(oldName.precomposedNFC)] else { throw unknown(oldName) }
        let newName = try SensorRules.name(rawNewName)
        if let other = byName[SensorRules.key(newName)], other != index {
            throw .duplicateName(new: newName, existing: sensors[other].name)
        }
        var sensor = sensors[index]
        if let template {
            let topic = try template.topic(for: newName)
            if let other = byTopic[topic], other != index {
                throw .duplicateTopic(topic: topic, sensor: sensors[other].name)
            }
            byTopic[sensor.topic] = nil
            byTopic[topic] = index
            sensor.topic = topic
        }
        byName[SensorRules.key(sensor.name)] = nil
        byName[SensorRules.key(newName)] = index
        sensor.name = newName
        sensors[index] = sensor
        sourceRanges[index] = nil
        revision &+= 1
        return sensor
    }

    /// Changes how the sensor called `name` reads its device (kind, format, availability, silence timeout); its
    /// name, topic and id stay.
    @discardableResult
    public mutating func configureSensor(
        named name: String, _ change: (inout Sensor) -> Void
    ) throws(RegistryError) -> Sensor {
        guard let index = byName[SensorRules.key(name.precomposedNFC)] else { throw unknown(name) }
        var sensor = sensors[index]
        change(&sensor)
        (sensor.name, sensor.topic, sensor.id) = (sensors[index].name, sensors[index].topic, sensors[index].id)
        try checkAvailability(sensor.availability, of: sensor.topic)
        guard sensor != sensors[index] else { return sensor }
        sensors[index] = sensor
        sourceRanges[index] = nil
        revision &+= 1
        return sensor
    }

    private func checkAvailability(_ availability: String?, of topic: String) throws(RegistryError) {
        guard let availability else { return }
        _ = try SensorRules.topic(availability)
        if availability == topic {
            throw .invalidTopic(
                availability, "it is the sensor's own topic, where 'online' and 'offline' are understood already")
        }
        if let other = self.sensor(onTopic: availability) {
            throw .invalidTopic(
                availability, "it is the topic of the sensor '\(other.name)', not an availability topic")
        }
    }

    /// Records what the agent knows of the sensor on `topic`; returns false when no sensor uses it any more
    /// (removed or given another topic since), or when `id` names another sensor (removed, and a new one added on
    /// the topic), in which case nothing changes. A `sequence` below the stored one is older news: ignored.
    @discardableResult
    public mutating func recordStatus(
        _ status: String, lastUpdated: Timestamp?, onTopic topic: String, id: String? = nil, sequence: Int? = nil,
        attributes: SensorAttributes? = nil, alerts: [String]? = nil, statusBeforeOffline: String?? = nil,
        session: OpenSession?? = nil
    ) -> Bool {
        guard let index = byTopic[topic], id == nil || sensors[index].id == id else { return false }
        let sensor = sensors[index]
        if let sequence {
            // Older news: an earlier event, or the same status seen before the one stored.
            if sequence < sensor.sequence { return true }
            if sequence == sensor.sequence, let stored = sensor.lastUpdated, let lastUpdated, lastUpdated < stored {
                return true
            }
            // Discovery's first record (never updated) after the first reading of the same sequence (a numeric
            // sensor's readings make no events): older news too.
            if sequence == sensor.sequence, lastUpdated == nil, sensor.lastUpdated != nil { return true }
        }
        guard
            sensor.status != status || sensor.lastUpdated != lastUpdated
                || (sequence ?? sensor.sequence) != sensor.sequence
                || (attributes ?? sensor.attributes) != sensor.attributes
                || (alerts ?? sensor.alerts) != sensor.alerts
                || (statusBeforeOffline ?? sensor.statusBeforeOffline) != sensor.statusBeforeOffline
                || (session ?? sensor.session) != sensor.session
        else { return true }
        if let statusBeforeOffline { sensors[index].statusBeforeOffline = statusBeforeOffline }
        if let session { sensors[index].session = session }
        if let attributes { sensors[index].attributes = attributes }
        if let alerts { sensors[index].alerts = alerts }
        sensors[index].status = status
        sensors[index].lastUpdated = lastUpdated
        if let sequence { sensors[index].sequence = sequence }
        sourceRanges[index] = nil
        revision &+= 1
        return true
    }

    private func unknown(_ name: String) -> RegistryError {
        .unknownSensor(name, suggestion: SensorRules.closest(to: name, among: sensors.lazy.map(\.name)))
    }

    private mutating func reindex() {
        byName = Dictionary(minimumCapacity: sensors.count)
        byTopic = Dictionary(minimumCapacity: sensors.count)
        byID = Dictionary(minimumCapacity: sensors.count)
        for (index, sensor) in sensors.enumerated() {
            byName[SensorRules.key(sensor.name)] = index
            byTopic[sensor.topic] = index
            byID[sensor.id] = index
        }
    }

    /// Equal content; where it was read from does not count.
    public static func == (lhs: DefaultsDocument, rhs: DefaultsDocument) -> Bool {
        lhs.schemaVersion == rhs.schemaVersion && lhs.sensors == rhs.sensors && lhs.broker == rhs.broker
            && lhs.unknownFields == rhs.unknownFields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(schemaVersion)
        hasher.combine(sensors)
        hasher.combine(broker)
    }
}

// MARK: - Decoding

extension DefaultsDocument {
    /// Reads a document, checking its syntax, its shape and the registry's rules (valid, unique names and
    /// topics); the error says where the first problem is.
    public static func decode(_ bytes: [UInt8]) throws(JSONSyntaxError) -> DefaultsDocument {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            var reader = JSONReader(buffer)
            var document = DefaultsDocument()
            // 125-180 bytes a sensor: sizing the indices once, for at least as many, saves rehashing them as they
            // grow (with 150 they grew once more at 100,000 sensors, 8 % of a read).
            document.byName.reserveCapacity(buffer.count / 100)
            document.byTopic.reserveCapacity(buffer.count / 100)
            document.byID.reserveCapacity(buffer.count / 100)
            var version: Int?
            let start = reader.index
            try reader.readObject { key, reader throws(JSONSyntaxError) in
                switch key {
                case "schemaVersion":
                    let at = reader.index
                    let value = try reader.int(at: "schemaVersion")
                    guard value >= 1 else {
                        throw reader.error("schemaVersion: \(value) is not a schema version", at: at)
                    }
                    guard value <= currentSchemaVersion else {
                        throw reader.error(
                            "schemaVersion \(value) was written by a newer SensorHub; this one reads up to"
                                + " \(currentSchemaVersion) — upgrade it, or restore an older copy of the file",
                            at: at)
                    }
                    version = value
                case "sensors":
                    try reader.readArray { reader throws(JSONSyntaxError) in
                        try document.appendDecodedSensor(&reader)
                    }
                case "broker":
                    document.broker = try BrokerSettings.decode(&reader)
                default:
                    document.unknownFields.members.append((key, try reader.readRaw()))
                }
            }
            try reader.finish()
            guard let version else { throw reader.error("the document has no \"schemaVersion\"", at: start) }
            document.schemaVersion = version
            document.revision = 0
            document.source = bytes
            return document
        }
    }

    private mutating func appendDecodedSensor(_ reader: inout JSONReader) throws(JSONSyntaxError) {
        let position = sensors.count
        var path: String { "sensors[\(position)]" }
        let start = reader.index
        var needsIDs = false
        // A sensor read without an id is encoded again, with it, on the next write.
        defer { sourceRanges.append(needsIDs ? nil : start..<reader.index) }
        var name: String?
        var topic: String?
        var status: String?
        var lastUpdated: Timestamp?
        var added: Timestamp?
        var kind = SensorKind.status
        var silenceTimeout: Duration?
        var id: String?
        var sequence = 0
        var device = Sensor.Extras()
        var unknown = UnknownFields()
        var nameAt = start
        var topicAt = start
        var idAt = start
        // A loop matching key bytes, not a closure and a string per key: this runs for every sensor.
        var cursor = try reader.beginObject()
        while let key = try reader.nextKey(&cursor, known: Sensor.keys) {
            let at = reader.index
            switch key {
            case .known(0):
                nameAt = at
                name = try reader.string(at: "\(path).name")
            case .known(1):
                topicAt = at
                topic = try reader.string(at: "\(path).topic")
            case .known(2):
                status = try reader.string(at: "\(path).status")
            case .known(3):
                if reader.nextIsNull {
                    try reader.readNull()
                } else {
                    lastUpdated = try reader.timestamp(at: "\(path).lastUpdated")
                }
            case .known(4):
                added = try reader.timestamp(at: "\(path).added")
            case .known(5):
                kind = SensorKind(rawValue: try reader.string(at: "\(path).kind"))
            case .known(7):
                idAt = at
                let value = try reader.string(at: "\(path).id")
                guard SensorID.isValid(value) else {
                    throw reader.error("\(path).id: '\(value)' is not a sensor id (12 hex digits)", at: at)
                }
                id = value
            case .known(8):
                sequence = try reader.int(at: "\(path).sequence")
                guard sequence >= 0 else { throw reader.error("\(path).sequence: below zero", at: at) }
            case .known(6):
                if let seconds = try reader.optionalDouble(at: "\(path).silenceTimeout") {
                    guard seconds > 0, seconds.isFinite else {
                        throw reader.error("\(path).silenceTimeout: expected a number of seconds above zero", at: at)
                    }
                    silenceTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
                }
            case .known(let known):
                try device.read(known - 9, from: &reader, at: path)
            case .other(let key):
                unknown.members.append((key, try reader.readRaw()))
            }
        }
        guard let name else { throw reader.error("\(path) has no \"name\"", at: start) }
        guard let topic else { throw reader.error("\(path) has no \"topic\"", at: start) }
        guard let added else { throw reader.error("\(path) has no \"added\" time", at: start) }
        if let problem = SensorRules.problem(withStoredName: name) {
            throw reader.error("\(path).name: '\(UnsafeText.escaped(name))' \(problem)", at: nameAt)
        }
        do {
            _ = try SensorRules.topic(topic)
        } catch {
            throw reader.error("\(path).topic: \(error)", at: topicAt)
        }
        let key = SensorRules.key(name)
        if let other = byName[key] {
            throw reader.error(
                "\(path).name: '\(UnsafeText.escaped(name))' is also the name of sensors[\(other)]", at: nameAt)
        }
        if let other = byTopic[topic] {
            throw reader.error(
                "\(path).topic: '\(UnsafeText.escaped(topic))' is also the topic of sensors[\(other)]", at: topicAt)
        }
        // A registry written before ids: every reader derives the same id, and the next write stores it.
        let stored = id != nil
        let sensorID = id ?? SensorID.derived(topic: topic, added: added)
        if let other = byID[sensorID] {
            throw reader.error("\(path).id: '\(sensorID)' is also the id of sensors[\(other)]", at: idAt)
        }
        var sensor = Sensor(
            name: name, topic: topic, status: status ?? Sensor.waiting, lastUpdated: lastUpdated, added: added,
            kind: kind, silenceTimeout: silenceTimeout, id: sensorID, sequence: sequence)
        device.unknownFields = unknown
        if device.isUsed { sensor.extras = OutOfLine(device) }
        byName[key] = position
        byTopic[topic] = position
        byID[sensorID] = position
        sensors.append(sensor)
        if !stored { needsIDs = true }
    }
}
