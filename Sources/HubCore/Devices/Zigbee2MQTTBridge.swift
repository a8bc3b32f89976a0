/// Which of a device's fields a discovered sensor follows.
///
/// A binary sensor first, in the order below: a device that has one is for it (a door contact's temperature is a
/// by-product). Then the first measurement of the list. Diagnostics (battery, voltage, link quality, the device's
/// own temperature) are never the value: they stay attributes.
enum PrimaryField {
    static let binary = [
        "contact", "occupancy", "presence", "water_leak", "smoke", "gas", "carbon_monoxide", "vibration", "tamper",
    ]
    /// Best first; a group's other names are other families' spellings of its first (Shelly's `tC`, `rh`).
    static let measurements = [
        ["temperature", "tc"], ["humidity", "rh"], ["pressure"], ["co2"], ["pm25"], ["pm10"], ["voc"],
        ["illuminance", "illuminance_lux", "lux"], ["soil_moisture"], ["power", "apower"],
    ]

    /// A field a device publishes.
    struct Candidate: Sendable, Hashable {
        /// Where it is in the payload.
        var steps: [ValuePath.Segment]
        /// Its name as published (`contact`, `Temperature`).
        var name: String
        /// Whether it can be a binary sensor's value: true or false, or Tasmota's 0 or 1.
        var isBinary: Bool
        var isNumber: Bool

        /// A field of a JSON payload, judged by its value.
        init?(_ steps: [ValuePath.Segment], name: String, value: JSONTree) {
            switch value {
            case .bool: (isBinary, isNumber) = (true, false)
            case .number(let number, _): (isBinary, isNumber) = (number == 0 || number == 1, true)
            default: return nil
            }
            self.steps = steps
            self.name = name
        }

        init(steps: [ValuePath.Segment], name: String, isBinary: Bool, isNumber: Bool) {
            self.steps = steps
            self.name = name
            self.isBinary = isBinary
            self.isNumber = isNumber
        }
    }

    /// The field to follow among `candidates` and why; `nil` when none is one a sensor follows.
    static func choose(_ candidates: [Candidate]) -> (path: ValuePath, reason: String)? {
        var chosen: (Candidate, String)?
        for field in binary {
            if let found = candidates.first(where: { $0.name.lowercased() == field && $0.isBinary }) {
                let kind = KnownField.all[field]?.deviceClass.map { " (\($0))" } ?? ""
                chosen = (found, "'\(found.name)' is a binary sensor\(kind): those come before measurements")
                break
            }
        }
        if chosen == nil {
            let measured = measurements.flatMap { $0 }
            for name in measured {
                if let found = candidates.first(where: { $0.name.lowercased() == name && $0.isNumber }) {
                    chosen = (
                        found, "'\(found.name)' comes first of the measurements (temperature, humidity, pressure…)"
                    )
                    break
                }
            }
        }
        guard let (field, reason) = chosen, let path = try? ValuePath(ValuePath.text(of: field.steps)) else {
            return nil
        }
        let primary = Set(binary + measurements.flatMap { $0 })
        let others = candidates.filter { $0.name != field.name && primary.contains($0.name.lowercased()) }
        guard !others.isEmpty else { return (path, reason) }
        let stay = others.count == 1 ? " stays an attribute" : " stay attributes"
        return (path, reason + "; " + others.map(\.name).joined(separator: ", ") + stay)
    }

    /// What the fields a sensor follows are, for messages: "contact, occupancy, … temperature, humidity…".
    static let listed = binary.prefix(4).joined(separator: ", ") + "… or temperature, humidity, pressure…"
}

/// One device of Zigbee2MQTT's retained `<base>/bridge/devices` list, as discovery reads it: `friendly_name`,
/// `ieee_address`, `type`, `power_source`, `disabled`, `supported` and `definition` (`model`, `vendor`,
/// `description`, `exposes[]` with `type`, `property`, `access`, `category`, and `features` for composites).
struct Zigbee2MQTTListing: Sendable {
    var friendlyName: String
    var address: String?
    var powerSource: String?
    var model: String?
    var vendor: String?
    var description: String?
    /// The fields its state carries (exposes published in the state, diagnostics left out).
    var fields: [PrimaryField.Candidate] = []
    /// Why it makes no sensor whatever its fields, if so.
    var skipped: String?

    /// The devices of a `bridge/devices` payload but the coordinator (Zigbee2MQTT's own adapter); `nil` when it is
    /// not a list.
    static func read(_ tree: JSONTree) -> [Zigbee2MQTTListing]? {
        guard case .array(let entries) = tree else { return nil }
        return entries.compactMap { entry in
            guard case .string(let name)? = entry["friendly_name"], !name.isEmpty,
                entry["type"]?.text != "Coordinator"
            else { return nil }
            var listing = Zigbee2MQTTListing(friendlyName: name)
            listing.address = entry["ieee_address"]?.text
            listing.powerSource = entry["power_source"]?.text
            let definition = entry["definition"]
            listing.model = definition?["model"]?.text
            listing.vendor = definition?["vendor"]?.text
            listing.description = definition?["description"]?.text
            if entry["disabled"] == .bool(true) {
                listing.skipped = "disabled in Zigbee2MQTT"
            } else if entry["supported"] == .bool(false) || definition == nil || definition == .null {
                listing.skipped = "not supported by Zigbee2MQTT (or its interview has not finished): no definition"
            }
            if case .array(let exposes)? = definition?["exposes"] { collect(exposes, under: [], into: &listing.fields) }
            return listing
        }
    }

    /// Whether the bridge says the device runs on a battery; `nil` when it does not say.
    /// ("Battery"; "Mains (single phase)", "Mains (3 phase)"; anything else, such as "Unknown" or "DC Source", is
    /// not known, and the preset then assumes a battery, whose longer timeout raises no false alarm.)
    var batteryPowered: Bool? {
        powerSource.flatMap { $0 == "Battery" ? true : $0.hasPrefix("Mains") ? false : nil }
    }

    /// The exposed properties, flattened: a composite with a property of its own (`color`) nests its features'
    /// values under it; one without (`climate`, `switch`) has them at the top of the state.
    private static func collect(
        _ exposes: [JSONTree], under prefix: [ValuePath.Segment], into fields: inout [PrimaryField.Candidate]
    ) {
        for expose in exposes {
            let property = expose["property"]?.text
            if case .array(let features)? = expose["features"] {
                collect(features, under: property.map { prefix + [.key($0)] } ?? prefix, into: &fields)
                continue
            }
            guard let property, !property.isEmpty, expose["category"]?.text != "diagnostic" else { continue }
            // `access` bit 1: published in the state (2 settable, 4 readable).
            // A hostile list can hold any number here (1e19, 1e400): read only what an Int holds exactly.
            if case .number(let access, _)? = expose["access"], access.isFinite,
                let bits = Int(exactly: access.rounded(.towardZero)), bits & 1 == 0
            {
                continue
            }
            let type = expose["type"]?.text
            fields.append(
                PrimaryField.Candidate(
                    steps: prefix + [.key(property)], name: property, isBinary: type == "binary",
                    isNumber: type == "numeric"))
        }
    }
}

extension JSONTree {
    /// The text of a string.
    var text: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }
}
