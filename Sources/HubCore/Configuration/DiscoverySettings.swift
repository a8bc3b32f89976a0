/// hubd.yaml's `discovery` section: whether hubd adds the devices it hears by itself, which, and how many at most.
///
/// ```yaml
/// discovery:
///   enabled: true
///   families: [zigbee2mqtt, tasmota, esphome, shelly]
///   zigbee2mqtt_base: zigbee2mqtt       # or a list of base topics
///   max_auto_sensors: 100
/// ```
public struct DiscoverySettings: Sendable, Hashable {
    /// Off unless asked for: a new sensor is a change to the registry the user did not make.
    public var enabled = false
    public var families: [DeviceFamily] = DeviceFamily.all
    /// Zigbee2MQTT's base topics (`mqtt.base_topic`).
    public var zigbee2mqttBases = ["zigbee2mqtt"]
    /// Discovery adds no more sensors than this, ever (it remembers what it added, across restarts): a flood of new
    /// topics can't grow the registry without bound.
    public var maximumAutoSensors = 100

    public init() {}

    /// Reads the section; an unknown key, family or an invalid base topic is an error.
    static func read(_ node: ConfigNode) throws(ConfigurationError) -> DiscoverySettings {
        try node.allow(keys)
        var settings = DiscoverySettings()
        if let enabled = try node["enabled"].bool() { settings.enabled = enabled }
        if let families = try node["families"].stringItems() {
            settings.families = try families.map { text, item throws(ConfigurationError) in
                let family = DeviceFamily(rawValue: text.lowercased())
                guard DeviceFamily.all.contains(family) else {
                    throw item.invalidValue(text, "one of \(DeviceFamily.all.map(\.rawValue).joined(separator: ", "))")
                }
                return family
            }
        }
        if let bases = try node["zigbee2mqtt_base"].stringItems() {
            settings.zigbee2mqttBases = try bases.map { text, item throws(ConfigurationError) in
                let base = String(text.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
                guard !base.isEmpty, (try? SensorRules.topic(base)) != nil else {
                    throw item.invalidValue(text, "a topic without wildcards, Zigbee2MQTT's mqtt.base_topic")
                }
                return base
            }
        }
        if let maximum = try node["max_auto_sensors"].integer(in: 0...100_000) { settings.maximumAutoSensors = maximum }
        return settings
    }
}
