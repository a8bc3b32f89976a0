import Foundation
import HubSupport

/// A device heard on the broker and the sensor the hub would make for it. Its setup is the one the family's preset
/// gives (`DeviceFamily.setup`), so a discovered sensor and one added with `hubctl sensors add --preset` can't
/// differ.
///
/// One sensor per device topic, as the registry has one sensor per topic: the device's primary field is the value
/// (a binary sensor before any measurement: a door contact, not its temperature), and the payload's other fields are
/// kept as attributes, where threshold rules can watch them (a climate sensor's humidity).
public struct DiscoveredDevice: Sendable, Hashable {
    public var family: DeviceFamily
    /// The device's name in its family, what `--device` takes: a Zigbee2MQTT friendly name, a Tasmota topic, an
    /// ESPHome `node/component/object_id`, a Shelly `prefix/component:id`.
    public var device: String
    /// Zigbee2MQTT's base topic, for a Zigbee2MQTT device.
    public var base: String?
    /// The sensor's name: the device's, made fit for a sensor (`DefaultsDocument.addDiscovered` numbers it when a
    /// sensor of another topic has it).
    public var name: String
    /// Why the name is not the device's own, when it is not.
    public var nameNote: String?
    public var setup: DeviceFamily.Setup
    /// Why the value is the field it is.
    public var reason: String
    /// What Zigbee2MQTT's bridge says of the device.
    public var model: String?
    public var vendor: String?
    public var description: String?
    /// The device's IEEE address (Zigbee2MQTT).
    public var address: String?
    /// What Zigbee2MQTT's bridge says of its power; `nil` when unknown (the preset then assumes a battery).
    public var batteryPowered: Bool?
    /// The last value heard, as the sensor would show it (`closed`, `21.3 °C`).
    public var value: String?
    /// Whether that value came as a retained message: the broker's copy, which may be old.
    public var retained = false

    /// What `hubctl sensors add NAME` takes to make the same sensor.
    public var presetArguments: [String] {
        var arguments = ["--preset", family.rawValue, "--device", device]
        if let base, base != "zigbee2mqtt" { arguments += ["--base", base] }
        if batteryPowered == false { arguments.append("--mains-powered") }
        if let path = setup.format.path { arguments += ["--value", path.description] }
        return arguments
    }

    /// One line for people and for the `discovered` event: the device, what it is, and the field followed.
    public var summary: String {
        var text = "\(family.displayName) device '\(device)'"
        let about = [[vendor, model].compactMap { $0 }.joined(separator: " "), description ?? ""].filter {
            !$0.isEmpty
        }
        if !about.isEmpty { text += " (\(about.joined(separator: ", ")))" }
        text += " on '\(setup.topic)'"
        if let path = setup.format.path { text += ", value '\(path)'" }
        return text
    }
}

extension DeviceFamily {
    /// The family's own name for people: `Zigbee2MQTT`, `Tasmota`, `ESPHome`, `Shelly`.
    public var displayName: String {
        switch self {
        case .zigbee2mqtt: "Zigbee2MQTT"
        case .tasmota: "Tasmota"
        case .esphome: "ESPHome"
        case .shelly: "Shelly"
        default: rawValue
        }
    }
}

extension DefaultsDocument {
    /// Adds the sensor `device` makes, under its name or, when a sensor of another topic has that name, the first
    /// free one of "<name> 2", "<name> 3"…
    @discardableResult
    public mutating func addDiscovered(_ device: DiscoveredDevice, at time: Timestamp = .now) throws(RegistryError)
        -> Sensor
    {
        var name = device.name
        var number = 2
        while sensor(named: name) != nil && number < 1000 {
            let suffix = " \(number)"
            name = String(device.name.prefix(SensorRules.maximumNameLength - suffix.count)) + suffix
            number += 1
        }
        let setup = device.setup
        return try addSensor(
            named: name, topic: setup.topic, kind: setup.kind, silenceTimeout: setup.silenceTimeout,
            format: setup.format, availability: setup.availability, at: time)
    }
}

extension SensorRules {
    /// A sensor name made from a device's: characters a name can't hold (`/`, `+`, `#`, `:`…) become spaces, runs
    /// of spaces one, and it is cut to the longest name; `nil` when nothing usable is left.
    static func name(fromDevice device: String) -> (name: String, note: String?)? {
        var scalars = String.UnicodeScalarView()
        var replaced: [String] = []
        for scalar in device.unicodeScalars {
            if isAllowed(scalar) {
                scalars.append(scalar)
            } else {
                if !replaced.contains(String(scalar)) { replaced.append(String(scalar)) }
                if scalars.last != " " { scalars.append(" ") }
            }
        }
        var name = String(scalars).split(separator: " ").joined(separator: " ")
        name = String(name.prefix(maximumNameLength)).trimmingCharacters(in: .whitespaces)
        guard let valid = try? SensorRules.name(name) else { return nil }
        var notes: [String] = []
        if !replaced.isEmpty {
            let shown = replaced.map { "'\(UnsafeText.escaped($0))'" }.joined(separator: ", ")
            notes.append("\(shown) became a space: a sensor name can't hold \(replaced.count == 1 ? "it" : "them")")
        }
        if device.count > maximumNameLength { notes.append("cut to \(maximumNameLength) characters") }
        return (valid, notes.isEmpty ? nil : notes.joined(separator: "; "))
    }
}
