/// `uv:` in hubd.yaml: the place the UV index is computed for. `hubctl uv` reads it (its `--lat`/`--lon` default);
/// with a place, hubd's UV source publishes it as a numeric sensor with WHO's bands.
public struct UVSettings: Sendable, Hashable {
    /// Both or neither: `nil` when the section does not name a place.
    public var place: GeoPoint?
    /// `ozone`: the total ozone column in DU; `nil` is the climatological default.
    public var ozone: Double?
    /// `altitude`: metres above sea level, for WHO's +10 % a kilometre; 0 (off) by default.
    public var altitude: Double = 0
    /// `name`: the sensor's name in the registry.
    public var name = "uv index"
    /// `topic`: where the source publishes; `{name}` is the sensor's name.
    public var topic = "sensorhub/uv/{name}"
    /// `interval`: a reading this often.
    public var interval: Duration = .seconds(600)
    /// `temis`: the TEMIS UV-index page to read the ozone column and the week's forecast from (`true`: TEMIS's own
    /// page for the place); `nil`: none.
    public var temisURL: String?
    /// `temis_refresh`: the page is fetched at most this often (it changes once a day).
    public var temisRefresh: Duration = .seconds(3 * 3600)

    public init() {}

    /// The topic with the name put in.
    public var resolvedTopic: String { topic.replacingOccurrences(of: "{name}", with: name) }

    /// TEMIS's UV-index page for a place.
    public static func temisPage(for place: GeoPoint) -> String {
        "https://www.temis.nl/uvradiation/nrt/uvindex.php?lon=\(place.longitude)&lat=\(place.latitude)"
    }

    /// Reads the section; a latitude without a longitude (or the reverse) or a value out of range is an error.
    static func read(_ node: ConfigNode) throws(ConfigurationError) -> UVSettings {
        try node.allow(keys)
        var settings = UVSettings()
        let latitude = try node["latitude"].number(in: -90...90)
        let longitude = try node["longitude"].number(in: -180...180)
        switch (latitude, longitude) {
        case (let latitude?, let longitude?): settings.place = GeoPoint(latitude: latitude, longitude: longitude)
        case (nil, nil): break
        case (nil, _): throw node["latitude"].invalid("uv.longitude needs uv.latitude too")
        case (_, nil): throw node["longitude"].invalid("uv.latitude needs uv.longitude too")
        }
        if let ozone = try node["ozone"].number(in: UVIndex.plausibleOzone) { settings.ozone = ozone }
        if let altitude = try node["altitude"].number(in: -500...9000) { settings.altitude = altitude }
        if let name = try node["name"].value("a sensor name", { try SensorRules.name($0) }) { settings.name = name }
        if let topic = try node["topic"].string() {
            settings.topic = topic
            do {
                _ = try SensorRules.topic(settings.resolvedTopic)
            } catch {
                throw node["topic"].invalidValue(topic, "\(error)")
            }
        }
        if let interval = try node["interval"].duration(in: .seconds(1)...(.seconds(86_400))) {
            settings.interval = interval
        }
        if let refresh = try node["temis_refresh"].duration(in: .seconds(1)...(.seconds(7 * 86_400))) {
            settings.temisRefresh = refresh
        }
        let temis = node["temis"]
        if let text = try temis.string() {
            switch text.lowercased() {
            case "true", "yes", "on":
                guard let place = settings.place else {
                    throw temis.invalid("uv.temis reads TEMIS's page for uv.latitude and uv.longitude: set them")
                }
                settings.temisURL = temisPage(for: place)
            case "false", "no", "off", "": break
            default: settings.temisURL = try temis.url()
            }
        }
        return settings
    }
}
