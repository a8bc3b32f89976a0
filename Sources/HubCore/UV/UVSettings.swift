/// `uv:` in hubd.yaml: the place the UV index is computed for. For now `hubctl uv` reads it (its `--lat`/`--lon`
/// default); hubd's computed UV source, which will publish it as a sensor, comes later.
public struct UVSettings: Sendable, Hashable {
    /// Both or neither: `nil` when the section does not name a place.
    public var place: GeoPoint?
    /// `ozone`: the total ozone column in DU; `nil` is the climatological default.
    public var ozone: Double?
    /// `altitude`: metres above sea level, for WHO's +10 % a kilometre; 0 (off) by default.
    public var altitude: Double = 0

    public init() {}

    /// Reads the section; a latitude without a longitude (or the reverse) or a value out of range is an error.
    static func read(_ node: ConfigNode) throws(ConfigurationError) -> UVSettings {
        try node.allow(["latitude", "longitude", "ozone", "altitude"])
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
        return settings
    }
}
