/// What hubd publishes for Home Assistant: for each sensor, its normalised state (`<base>/sensor/<id>/state`, one
/// JSON shape whatever the device family) and availability (`<base>/sensor/<id>/availability`), and retained MQTT
/// discovery configs that make it an entity.
///
/// Per-entity discovery (`<prefix>/<component>/sensorhub/<object id>/config`), not device-based: Home Assistant
/// has read it since 2019 and every release reads it still; device-based discovery (2024.11) is unknown to the
/// releases many people still run (and to 2024.3.3, the newest that installs on Python 3.11). Ids, never names, go
/// into topics and unique ids: a name can hold spaces, `/`, `+` or `#`; a rename changes only the `name` field.
/// A value type with no I/O.
public struct HomeAssistantDiscovery: Sendable, Hashable {
    public var prefix: String
    /// Where the hub's own `online` / `offline` is (its will).
    public var hubAvailability: String
    /// The hub's identity in Home Assistant's device registry (its MQTT client id).
    public var hubID: String
    public var version: String
    /// The hub-wide silence timeout, for sensors without their own (`expire_after`).
    public var defaultSilence: Duration?
    /// The first level of the uniform state topics.
    public var base = "sensorhub"

    public init(prefix: String, hubAvailability: String, hubID: String, version: String, defaultSilence: Duration?) {
        self.prefix = prefix
        self.hubAvailability = hubAvailability
        self.hubID = Self.identifier(hubID)
        self.version = version
        self.defaultSilence = defaultSilence
    }

    /// One retained message.
    public struct Message: Sendable, Hashable {
        public var topic: String
        /// Empty: the config is removed (or, for a state, cleared).
        public var payload: [UInt8]

        public init(topic: String, payload: [UInt8]) {
            self.topic = topic
            self.payload = payload
        }
    }

    public func stateTopic(_ sensor: Sensor) -> String { "\(base)/sensor/\(sensor.id)/state" }
    public func availabilityTopic(_ sensor: Sensor) -> String { "\(base)/sensor/\(sensor.id)/availability" }
    /// Where Home Assistant says it (re)started.
    public var birthTopic: String { "\(prefix)/status" }
    var hubDevice: String { "sensorhub_hub_\(hubID)" }

    /// `[a-zA-Z0-9_-]` only, as discovery topics allow.
    static func identifier(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
                        ? scalar : "_"
                }))
    }

    // MARK: Configs

    /// An entity: its component, object id and the members particular to it.
    struct Entity {
        var component: String
        var objectID: String
        /// `nil`: the device's name (the sensor's own entity).
        var name: String?
        var members: (inout JSONWriter, inout Bool) -> Void
    }

    /// The hub itself: a connectivity sensor that is the `via_device` of every sensor.
    public var hubConfig: Message {
        var writer = JSONWriter(capacity: 512, compact: true)
        var first = true
        writer.raw("{")
        // No name of its own: the entity is the hub device's main one, shown as "SensorHub" ("SensorHub SensorHub"
        // with one).
        writer.key("name", first: &first)
        writer.raw("null")
        member(&writer, &first, "unique_id", "\(hubDevice)_connectivity")
        member(&writer, &first, "state_topic", hubAvailability)
        member(&writer, &first, "payload_on", "online")
        member(&writer, &first, "payload_off", "offline")
        member(&writer, &first, "device_class", "connectivity")
        member(&writer, &first, "entity_category", "diagnostic")
        writer.key("device", first: &first)
        var inner = true
        writer.raw("{")
        writer.key("identifiers", first: &inner)
        writer.strings([hubDevice])
        member(&writer, &inner, "name", "SensorHub")
        member(&writer, &inner, "manufacturer", "SensorHub")
        member(&writer, &inner, "model", "hubd")
        member(&writer, &inner, "sw_version", version)
        writer.raw("}")
        origin(&writer, &first)
        writer.raw("}")
        return Message(topic: "\(prefix)/binary_sensor/sensorhub/\(hubID)/config", payload: writer.bytes)
    }

    /// The discovery configs that make `sensor` entities, one per entity.
    public func configs(for sensor: Sensor) -> [Message] {
        entities(for: sensor).map { entity in
            var writer = JSONWriter(capacity: 1024, compact: true)
            var first = true
            writer.raw("{")
            writer.key("name", first: &first)
            if let name = entity.name { writer.string(name) } else { writer.raw("null") }
            let suffix = entity.objectID == sensor.id ? "" : entity.objectID.dropFirst(sensor.id.count)
            member(&writer, &first, "unique_id", "sensorhub_\(sensor.id)\(suffix)")
            member(&writer, &first, "state_topic", stateTopic(sensor))
            entity.members(&writer, &first)
            member(&writer, &first, "json_attributes_topic", stateTopic(sensor))
            // A numeric sensor with bands: its band (the hub's status) among the attributes, its value the state.
            let attributes =
                sensor.kind == .numeric && sensor.format.bands != nil
                ? "dict(value_json.attributes, band=value_json.status)" : "value_json.attributes"
            member(&writer, &first, "json_attributes_template", "{{ \(attributes) | tojson }}")
            writer.key("availability", first: &first)
            writer.raw("[")
            for (index, topic) in [hubAvailability, availabilityTopic(sensor)].enumerated() {
                if index > 0 { writer.raw(",") }
                var inner = true
                writer.raw("{")
                member(&writer, &inner, "topic", topic)
                writer.raw("}")
            }
            writer.raw("]")
            member(&writer, &first, "availability_mode", "all")
            if let silence = sensor.silenceTimeout ?? defaultSilence {
                writer.key("expire_after", first: &first)
                writer.number(max(1, Int(silence.seconds.rounded(.up))))
            }
            device(sensor, &writer, &first)
            origin(&writer, &first)
            writer.raw("}")
            return Message(
                topic: "\(prefix)/\(entity.component)/sensorhub/\(entity.objectID)/config", payload: writer.bytes)
        }
    }

    /// Every config topic a sensor may have had, whatever its kind: what `hubctl ha clear` and a removal empty.
    public func allConfigTopics(for sensor: Sensor) -> [String] {
        ["binary_sensor", "sensor"].flatMap { component in
            ["", "_pm25", "_pm10", "_air"].map { "\(prefix)/\(component)/sensorhub/\(sensor.id)\($0)/config" }
        }
    }

    func entities(for sensor: Sensor) -> [Entity] {
        let id = sensor.id
        switch sensor.kind {
        case .particulate:
            func pollutant(_ key: String, _ name: String) -> Entity {
                Entity(component: "sensor", objectID: "\(id)_\(key)", name: name) { writer, first in
                    // `None` (unknown) until the first reading: a sensor still Waiting has no such attribute.
                    self.member(
                        &writer, &first, "value_template", "{{ value_json.attributes.\(key) | default(none) }}")
                    self.member(&writer, &first, "unit_of_measurement", "µg/m³")
                    self.member(&writer, &first, "device_class", key)
                    self.member(&writer, &first, "state_class", "measurement")
                }
            }
            let alert = Entity(component: "binary_sensor", objectID: "\(id)_air", name: "Air quality alert") {
                writer, first in
                self.member(
                    &writer, &first, "value_template",
                    "{{ 'ON' if '\(AirQualityPolicy.alertName)' in value_json.alerts else 'OFF' }}")
                self.member(&writer, &first, "device_class", "problem")
            }
            return [pollutant("pm25", "PM2.5"), pollutant("pm10", "PM10"), alert]
        case .numeric:
            let known = KnownField.field(path: sensor.format.path, topic: sensor.topic)
            return [
                Entity(component: "sensor", objectID: id, name: nil) { writer, first in
                    self.member(&writer, &first, "value_template", "{{ value_json.value }}")
                    if let unit = sensor.format.unit { self.member(&writer, &first, "unit_of_measurement", unit) }
                    if let deviceClass = known?.deviceClass, known?.kind == .numeric {
                        self.member(&writer, &first, "device_class", deviceClass)
                    }
                    self.member(
                        &writer, &first, "state_class",
                        known?.deviceClass == "energy" ? "total_increasing" : "measurement")
                }
            ]
        default:
            if let map = sensor.format.map, map.statuses.count == 2 {
                let known = KnownField.field(path: sensor.format.path, topic: sensor.topic)
                let on = known?.onStatus(of: map) ?? map.status(for: "true") ?? map.status(for: "on") ?? map.statuses[0]
                let off = map.statuses.first { $0 != on } ?? map.statuses[1]
                return [
                    Entity(component: "binary_sensor", objectID: id, name: nil) { writer, first in
                        self.member(&writer, &first, "value_template", "{{ value_json.status }}")
                        self.member(&writer, &first, "payload_on", on)
                        self.member(&writer, &first, "payload_off", off)
                        if let deviceClass = known?.deviceClass, known?.kind == .status {
                            self.member(&writer, &first, "device_class", deviceClass)
                        }
                    }
                ]
            }
            // A free-text status: a sensor that shows the text.
            return [
                Entity(component: "sensor", objectID: id, name: nil) { writer, first in
                    self.member(&writer, &first, "value_template", "{{ value_json.status }}")
                }
            ]
        }
    }

    private func device(_ sensor: Sensor, _ writer: inout JSONWriter, _ first: inout Bool) {
        writer.key("device", first: &first)
        var inner = true
        writer.raw("{")
        writer.key("identifiers", first: &inner)
        writer.strings(["sensorhub_\(sensor.id)"])
        member(&writer, &inner, "name", sensor.name)
        member(&writer, &inner, "model", sensor.kind.rawValue + (sensor.format.path.map { " (\($0))" } ?? ""))
        member(&writer, &inner, "via_device", hubDevice)
        writer.raw("}")
    }

    func origin(_ writer: inout JSONWriter, _ first: inout Bool) {
        writer.key("origin", first: &first)
        var inner = true
        writer.raw("{")
        member(&writer, &inner, "name", "SensorHub")
        member(&writer, &inner, "sw_version", version)
        writer.raw("}")
    }

    func member(_ writer: inout JSONWriter, _ first: inout Bool, _ key: StaticString, _ value: String) {
        writer.key(key, first: &first)
        writer.string(value)
    }

    // MARK: State

    /// A sensor's normalised state: `status`, `value` (a number, for numeric sensors), `unit`, `attributes`,
    /// `alerts`, `last_updated`, `kind`, `name`, `id`.
    public static func state(of sensor: Sensor) -> [UInt8] {
        var writer = JSONWriter(capacity: 256, compact: true)
        var first = true
        writer.raw("{")
        writer.key("status", first: &first)
        writer.string(sensor.status)
        writer.key("value", first: &first)
        if let value = sensor.value {
            writer.number(value)
        } else {
            writer.raw("null")
        }
        writer.key("unit", first: &first)
        if let unit = sensor.format.unit { writer.string(unit) } else { writer.raw("null") }
        writer.key("attributes", first: &first)
        sensor.attributes.write(into: &writer)
        writer.key("alerts", first: &first)
        writer.strings(sensor.alerts)
        writer.key("last_updated", first: &first)
        if let time = sensor.lastUpdated { writer.timestamp(time) } else { writer.raw("null") }
        writer.key("kind", first: &first)
        writer.string(sensor.kind.rawValue)
        writer.key("name", first: &first)
        writer.string(sensor.name)
        writer.key("id", first: &first)
        writer.string(sensor.id)
        writer.raw("}")
        return writer.bytes
    }

    /// `online`, or `offline` for a sensor that is silent or whose device said so.
    public static func availability(of sensor: Sensor) -> [UInt8] {
        Array((sensor.status == "offline" ? "offline" : "online").utf8)
    }
}
