/// What the fields home devices publish mean: the kind, value map, unit and plausible range the hub gives a sensor
/// following one, by the field's name (Zigbee2MQTT's `contact`, Tasmota's `Temperature`, Shelly's `tC`). Presets
/// and discovery fill a sensor in from it; Home Assistant's `device_class` comes from it too.
public struct KnownField: Sendable, Hashable {
    public var name: String
    public var kind: SensorKind
    public var map: String?
    public var unit: String?
    public var range: ClosedRange<Double>?
    /// Home Assistant's device class for it (`door`, `temperature`).
    public var deviceClass: String?

    static func binary(_ name: String, _ map: String, _ deviceClass: String) -> KnownField {
        KnownField(name: name, kind: .status, map: map, unit: nil, range: nil, deviceClass: deviceClass)
    }

    static func number(
        _ name: String, _ unit: String, _ range: ClosedRange<Double>? = nil, _ deviceClass: String? = nil
    ) -> KnownField {
        KnownField(name: name, kind: .numeric, map: nil, unit: unit, range: range, deviceClass: deviceClass)
    }

    /// The fields, by lower-case name. Zigbee2MQTT's `contact: true` means the magnet is near: closed.
    public static let all: [String: KnownField] = {
        let fields: [KnownField] = [
            .binary("contact", "true=closed,false=open", "door"),
            .binary("occupancy", "true=occupied,false=clear", "occupancy"),
            .binary("presence", "true=present,false=clear", "presence"),
            .binary("water_leak", "true=leak,false=dry", "moisture"),
            .binary("smoke", "true=smoke,false=clear", "smoke"),
            .binary("gas", "true=gas,false=clear", "gas"),
            .binary("carbon_monoxide", "true=alarm,false=clear", "carbon_monoxide"),
            .binary("vibration", "true=vibration,false=still", "vibration"),
            .binary("tamper", "true=tampered,false=clear", "tamper"),
            .binary("battery_low", "true=low,false=ok", "battery"),
            .binary("output", "true=on,false=off", "power"),
            // ESPHome's binary sensors by their object id (`balcony_door`: ON is open).
            .binary("door", "true=open,false=closed", "door"),
            .binary("window", "true=open,false=closed", "window"),
            .binary("motion", "true=motion,false=clear", "motion"),
            .number("temperature", "°C", -60...125, "temperature"),
            .number("tc", "°C", -60...125, "temperature"),
            .number("humidity", "%", 0...100, "humidity"),
            .number("rh", "%", 0...100, "humidity"),
            .number("pressure", "hPa", 300...1100, "pressure"),
            .number("illuminance", "lx", 0...200_000, "illuminance"),
            .number("illuminance_lux", "lx", 0...200_000, "illuminance"),
            .number("lux", "lx", 0...200_000, "illuminance"),
            .number("co2", "ppm", 0...40_000, "carbon_dioxide"),
            .number("voc", "ppb", 0...100_000, "volatile_organic_compounds_parts"),
            .number("pm25", "µg/m³", 0...10_000, "pm25"),
            .number("pm10", "µg/m³", 0...10_000, "pm10"),
            .number("battery", "%", 0...100, "battery"),
            .number("percent", "%", 0...100, "battery"),
            .number("voltage", "mV", 0...500_000, "voltage"),
            .number("power", "W", -100_000...100_000, "power"),
            .number("apower", "W", -100_000...100_000, "power"),
            .number("energy", "kWh", 0...10_000_000, "energy"),
            .number("soil_moisture", "%", 0...100, "moisture"),
        ]
        return Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0) })
    }()

    /// Shelly Gen1's plain values under `shellies/<id>/sensor/<name>` (its MQTT API), where their payloads differ
    /// from the fields of the same name the others publish; the rest (temperature, humidity, battery, lux, smoke)
    /// are `all`'s.
    static let shellyGen1: [String: KnownField] = [
        // Door/Window 2: `open` or `close`.
        "state": .binary("state", "open=open,close=closed", "door"),
        "flood": .binary("flood", "true=leak,false=dry", "moisture"),
        "vibration": .binary("vibration", "1=vibration,0=still", "vibration"),
        "ext_power": .binary("ext_power", "true=on,false=off", "plug"),
        "tilt": .number("tilt", "°", 0...180),
        // Shelly Gas: none, mild or heavy (unknown and test besides), shown as it says; its concentration in ppm.
        "gas": KnownField(name: "gas", kind: .status, map: nil, unit: nil, range: nil, deviceClass: nil),
        "concentration": .number("concentration", "ppm", 0...100_000),
    ]

    /// Shelly Gen1's sensors on mains power (the Gas): the others under `sensor/` run on batteries and sleep.
    static let shellyGen1Mains: Set<String> = ["gas", "concentration"]

    /// The field a sensor follows: its value path's last key; for a plain value, the name its topic gives it (an
    /// ESPHome object id in `<node>/sensor/<object id>/state`, Shelly Gen1's `shellies/<id>/sensor/<name>` and
    /// `shellies/<id>/relay/<n>/power`).
    public static func field(path: ValuePath?, topic: String) -> KnownField? {
        if let path { return field(at: path) }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        if levels.count == 4, levels[3] == "state", levels[1] == "sensor" || levels[1] == "binary_sensor" {
            return field(named: String(levels[2]))
        }
        if levels.count == 4, levels[0] == "shellies", levels[2] == "sensor" {
            let name = levels[3].lowercased()
            return shellyGen1[name] ?? all[name]
        }
        if levels.count == 5, levels[0] == "shellies", levels[2] == "relay", levels[4] == "power" {
            return all["power"]
        }
        return nil
    }

    /// The field a value path ends at, if the hub knows it.
    public static func field(at path: ValuePath) -> KnownField? {
        guard case .key(let key)? = path.segments.last else { return nil }
        return all[key.lowercased()]
    }

    /// The field an ESPHome object id or a similar name is about: the name itself, else its last word
    /// (`living_room_temperature` → `temperature`, `balcony_door` → `door`).
    public static func field(named name: String) -> KnownField? {
        let name = name.lowercased()
        if let field = all[name] { return field }
        return name.split(separator: "_").last.flatMap { all[String($0)] }
    }

    /// Which of a two-status map's statuses Home Assistant's binary sensor calls on: for a door or window, open
    /// (Zigbee2MQTT's `contact: true` is closed); for the rest, what `true` (or `ON`, `1`) maps to.
    public func onStatus(of map: ValueMap) -> String? {
        if deviceClass == "door" || deviceClass == "window", map.statuses.contains("open") { return "open" }
        return map.status(for: "true") ?? map.status(for: "ON") ?? map.status(for: "1")
    }

    /// A sensor's format for this field: its map, unit and range (`path` where the value is).
    public func format(path: ValuePath?) -> ValueFormat {
        ValueFormat(path: path, map: map.flatMap { try? ValueMap($0) }, unit: unit, range: range)
    }
}
