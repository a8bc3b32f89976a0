/// `homeassistant:` in hubd.yaml: whether hubd announces its sensors to Home Assistant through MQTT discovery, and
/// where. Off by default; turning it off clears nothing (`hubctl ha clear` does).
public struct HomeAssistantSettings: Sendable, Hashable {
    public var enabled = false
    /// Home Assistant's `discovery_prefix`; it announces its start with `online` on `<prefix>/status`.
    public var prefix = "homeassistant"

    public init() {}

    /// Reads the section; an unknown key or a prefix that is not a plain topic is an error.
    static func read(_ node: ConfigNode) throws(ConfigurationError) -> HomeAssistantSettings {
        try node.allow(keys)
        var settings = HomeAssistantSettings()
        if let enabled = try node["enabled"].bool() { settings.enabled = enabled }
        if let prefix = try node["prefix"].value(
            "a topic without wildcards, like homeassistant",
            { text -> String? in
                let prefix = String(text.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
                return prefix.isEmpty || (try? SensorRules.topic(prefix)) == nil ? nil : prefix
            })
        {
            settings.prefix = prefix
        }
        return settings
    }
}
