import Foundation

/// The device families the hub knows how to follow without configuration: where each publishes, what it publishes,
/// how it says it is online, and how long it may stay quiet.
public struct DeviceFamily: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `<base>/<friendly name>`, JSON; `<base>/<name>/availability`.
    public static let zigbee2mqtt = DeviceFamily(rawValue: "zigbee2mqtt")
    /// `tele/<topic>/SENSOR`, JSON every TelePeriod (300 s); `tele/<topic>/LWT`.
    public static let tasmota = DeviceFamily(rawValue: "tasmota")
    /// `<node>/<component>/<object id>/state`, plain values; `<node>/status`.
    public static let esphome = DeviceFamily(rawValue: "esphome")
    /// Shelly Gen2+: `<prefix>/status/<component>:<id>`, JSON; `<prefix>/online`.
    public static let shelly = DeviceFamily(rawValue: "shelly")

    public static let all: [DeviceFamily] = [.zigbee2mqtt, .tasmota, .esphome, .shelly]
    public var description: String { rawValue }

    /// Zigbee2MQTT's own availability timeouts: a mains-powered device is offline after 10 minutes without a
    /// message, a battery device after 25 hours.
    public static let mainsSilence = Duration.seconds(600)
    public static let batterySilence = Duration.seconds(25 * 3600)
    /// Three of Tasmota's default TelePeriods (300 s): one missed report is not an outage.
    public static let tasmotaSilence = Duration.seconds(900)

    /// How a sensor follows one device of the family.
    public struct Setup: Sendable, Hashable {
        public var topic: String
        public var kind: SensorKind
        public var format: ValueFormat
        public var availability: String?
        public var silenceTimeout: Duration?

        public init(
            topic: String, kind: SensorKind, format: ValueFormat, availability: String?, silenceTimeout: Duration?
        ) {
            self.topic = topic
            self.kind = kind
            self.format = format
            self.availability = availability
            self.silenceTimeout = silenceTimeout
        }
    }

    /// The setup for `device` (its Zigbee2MQTT friendly name, Tasmota topic, ESPHome `node/component/object id`
    /// or Shelly `prefix/component:id`).
    /// - Parameters:
    ///   - base: Zigbee2MQTT's base topic (default `zigbee2mqtt`).
    ///   - value: where the value is, when not the family's usual place.
    ///   - batteryPowered: for Zigbee2MQTT, what the bridge says of the device (default: battery, the common case
    ///     for sensors, whose longer timeout raises no false alarm).
    public func setup(
        device: String, base: String? = nil, value: ValuePath? = nil, batteryPowered: Bool? = nil
    ) throws(DevicePresetError) -> Setup {
        let device = device.trimmingSlashes
        guard !device.isEmpty else { throw DevicePresetError("the device's name is empty") }
        switch self {
        case .zigbee2mqtt:
            let base = (base ?? "zigbee2mqtt").trimmingSlashes
            guard let value else {
                throw DevicePresetError(
                    "a Zigbee2MQTT device publishes several fields: name the one to follow with --value (contact,"
                        + " occupancy, water_leak, temperature, humidity…), or let 'hubctl discover' read them from"
                        + " the bridge")
            }
            return Self.setup(
                topic: "\(base)/\(device)", value: value, availability: "\(base)/\(device)/availability",
                silence: batteryPowered == false ? Self.mainsSilence : Self.batterySilence)
        case .tasmota:
            let value = value ?? (try? ValuePath("*.Temperature"))!
            let zigbee = value.segments.first == .key("ZbReceived")
            // With SetOption89 a Zigbee device has a topic of its own under the bridge's, `tele/<topic>/<short
            // address>/SENSOR`; its last will stays the bridge's, `tele/<topic>/LWT`.
            let bridge = device.split(separator: "/").first.map(String.init) ?? device
            var setup = Self.setup(
                topic: "tele/\(device)/SENSOR", value: value, availability: "tele/\(bridge)/LWT",
                silence: zigbee ? Self.batterySilence : Self.tasmotaSilence)
            if case .key(let key)? = value.segments.last, key.lowercased() == "contact" {
                // Tasmota's Zigbee bridge says Contact 0 for closed, 1 for open: the other way round from
                // Zigbee2MQTT's contact true (closed).
                setup.format.map = try? ValueMap("0=closed,1=open")
            }
            return setup
        case .esphome:
            var parts = device.split(separator: "/").map(String.init)
            if parts.count == 2 { parts.insert("sensor", at: 1) }
            guard parts.count == 3 else {
                throw DevicePresetError(
                    "an ESPHome device is named node/object_id or node/component/object_id (like"
                        + " livingroom/sensor/temperature), not '\(device)'")
            }
            let known = KnownField.field(named: parts[2])
            let numeric = parts[1] == "sensor"
            var format = numeric ? known?.format(path: nil) ?? ValueFormat() : ValueFormat()
            // ESPHome reports volts where Zigbee2MQTT reports millivolts.
            if numeric && known?.name == "voltage" { (format.unit, format.range) = ("V", 0...500) }
            if parts[1] == "binary_sensor" {
                // ON is what Home Assistant's device class calls on: an open door, motion, a leak — for a contact
                // too, whose Zigbee2MQTT `true` is the other way round (closed).
                var map = "ON=on,OFF=off"
                if let known, let knownMap = known.map.flatMap({ try? ValueMap($0) }), knownMap.statuses.count == 2,
                    let on = known.onStatus(of: knownMap), let off = knownMap.statuses.first(where: { $0 != on })
                {
                    map = "ON=\(on),OFF=\(off)"
                }
                format.map = try? ValueMap(map)
            }
            return Setup(
                topic: "\(parts[0])/\(parts[1])/\(parts[2])/state", kind: numeric ? .numeric : .status, format: format,
                availability: "\(parts[0])/status", silenceTimeout: Self.mainsSilence)
        case .shelly:
            if let gen1 = try Self.shellyGen1(device) { return gen1 }
            guard let slash = device.lastIndex(of: "/"), device[slash...].contains(":") else {
                throw DevicePresetError(
                    "a Shelly device is named prefix/component:id (Gen2 and later, like"
                        + " shellyplusht-08b61fd0/temperature:0) or <id>/sensor/<name>, <id>/relay/<n>,"
                        + " <id>/input/<n> (Gen1, like shellyht-C5F0A1/sensor/temperature), not '\(device)'")
            }
            let prefix = String(device[..<slash])
            let component = String(device[device.index(after: slash)...])
            let path: ValuePath
            if let value {
                path = value
            } else {
                switch component.split(separator: ":").first ?? "" {
                case "temperature": path = try! ValuePath("tC")
                case "humidity": path = try! ValuePath("rh")
                case "switch": path = try! ValuePath("output")
                case "devicepower": path = try! ValuePath("battery.percent")
                case "illuminance": path = try! ValuePath("lux")
                case "input": path = try! ValuePath("state")
                default:
                    throw DevicePresetError(
                        "the hub does not know what a Shelly '\(component)' reports: name the field with --value")
                }
            }
            // Shelly publishes a status when it changes and says `false` on `<prefix>/online` when it goes: no
            // timeout of its own, the hub's default applies.
            var setup = Self.setup(
                topic: "\(prefix)/status/\(component)", value: path, availability: "\(prefix)/online", silence: nil)
            if component.hasPrefix("input"), setup.format.map == nil {
                setup.format.map = try? ValueMap("true=on,false=off")
            }
            return setup
        default:
            throw DevicePresetError(
                "'\(rawValue)' is not a device family the hub knows: \(Self.all.map(\.rawValue).joined(separator: ", "))"
            )
        }
    }

    /// A Shelly Gen1 device's value (`[shellies/]<id>/sensor/<name>`, `…/relay/<n>`, `…/relay/<n>/power`,
    /// `…/input/<n>`): a plain payload on a topic of its own under `shellies/`, and `shellies/<id>/online` true or
    /// false. `nil` for a name of another shape (a Gen2 one).
    private static func shellyGen1(_ device: String) throws(DevicePresetError) -> Setup? {
        var levels = device.split(separator: "/").map(String.init)
        if levels.first == "shellies" { levels.removeFirst() }
        guard levels.count == 3 || levels.count == 4, ["sensor", "relay", "input"].contains(levels[1]),
            !levels.contains(where: { $0.contains(":") })
        else { return nil }
        let topic = "shellies/" + levels.joined(separator: "/")
        let availability = "shellies/\(levels[0])/online"
        switch (levels[1], levels.count) {
        case ("sensor", 3),
            ("relay", 4) where levels[3] == "power" && Int(levels[2]) != nil:
            guard let known = KnownField.field(path: nil, topic: topic) else {
                throw DevicePresetError(
                    "the hub does not know what a Shelly Gen1 sensor '\(levels[2])' reports (it knows temperature,"
                        + " humidity, battery, lux, state, flood, smoke, gas, concentration, vibration, tilt,"
                        + " ext_power)")
            }
            // Gen1 sensors are battery devices that sleep between reports (an H&T wakes every few hours), but the Gas.
            let battery = levels[1] == "sensor" && !KnownField.shellyGen1Mains.contains(levels[2].lowercased())
            return Setup(
                topic: topic, kind: known.kind, format: known.format(path: nil), availability: availability,
                silenceTimeout: battery ? batterySilence : nil)
        case ("relay", 3) where Int(levels[2]) != nil:
            return Setup(
                topic: topic, kind: .status, format: ValueFormat(map: try? ValueMap("on=on,off=off")),
                availability: availability, silenceTimeout: nil)
        case ("input", 3) where Int(levels[2]) != nil:
            return Setup(
                topic: topic, kind: .status, format: ValueFormat(map: try? ValueMap("1=on,0=off")),
                availability: availability, silenceTimeout: nil)
        default:
            throw DevicePresetError(
                "a Shelly Gen1 device is named <id>/sensor/<name>, <id>/relay/<n>, <id>/relay/<n>/power or"
                    + " <id>/input/<n> (like shellyht-C5F0A1/sensor/temperature), not '\(device)'")
        }
    }

    private static func setup(topic: String, value: ValuePath, availability: String, silence: Duration?) -> Setup {
        let known = KnownField.field(at: value)
        return Setup(
            topic: topic, kind: known?.kind ?? .status, format: known?.format(path: value) ?? ValueFormat(path: value),
            availability: availability, silenceTimeout: silence)
    }
}

/// A preset that can't be applied: why, in words a person can act on.
public struct DevicePresetError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension String {
    fileprivate var trimmingSlashes: String {
        String(drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
    }
}
