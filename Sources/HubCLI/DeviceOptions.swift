import ArgumentParser
import Foundation
import HubCore

/// How a sensor reads its device: a family preset, or the value path, map, unit and availability topic one by one
/// (what is given one by one wins over the preset). For `sensors add` and `sensors set`.
struct DeviceOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Follow a device of a known family — \(DeviceFamily.all.map(\.rawValue).joined(separator: ", ")): fills in the topic, value, map, unit, availability topic and silence timeout.",
            valueName: "family"))
    var preset: String?

    @Option(
        help: ArgumentHelp(
            "The device's name in its family (default: the sensor's name): a Zigbee2MQTT friendly name, a Tasmota topic, an ESPHome node/component/object_id, a Shelly prefix/component:id.",
            valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("Zigbee2MQTT's base topic (default: zigbee2mqtt).", valueName: "topic"))
    var base: String?

    @Flag(help: "The Zigbee2MQTT device is mains-powered: offline after 10 minutes of silence, not 25 hours.")
    var mainsPowered = false

    @Option(
        help: ArgumentHelp(
            "Where the value is in a JSON payload: contact, AM2301.Temperature, temperature:0.tC, list[0], ZbReceived.*.Contact, or a JSON Pointer like /AM2301/Temperature.",
            valueName: "path"))
    var value: String?

    @Option(help: ArgumentHelp("What the values mean, like true=closed,false=open.", valueName: "map"))
    var map: String?

    @Option(help: ArgumentHelp("The unit of a numeric sensor's value, like °C.", valueName: "unit"))
    var unit: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Decimals shown, 0–6 (default: as published, at most 2).", valueName: "n"))
    var decimals: Int?

    /// Unconditional: "-40..85" would be taken for an option.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Plausible values of a number, like -40..85: others are refused, not shown.", valueName: "low..high"))
    var range: String?

    @Option(
        help: ArgumentHelp(
            "Named ranges of a numeric sensor's value, like 0=Low,3=Moderate,6=High: the status is the band's name, the value still a reading ('' clears them).",
            valueName: "bands"))
    var bands: String?

    @Option(
        help: ArgumentHelp(
            "A topic where the device says online or offline (Zigbee2MQTT's …/availability, Tasmota's LWT).",
            valueName: "topic"))
    var availability: String?

    /// The options read and checked; `validate()` reports the first problem.
    struct Parsed {
        var family: DeviceFamily?
        var path: ValuePath?
        var map: ValueMap?
        var range: ClosedRange<Double>?
        var bands: ValueBands?
    }

    var parsed: Parsed {
        get throws {
            var parsed = Parsed()
            if let preset {
                let family = DeviceFamily(rawValue: preset.lowercased())
                guard DeviceFamily.all.contains(family) else {
                    throw ValidationError(
                        "--preset '\(preset)' is not a family the hub knows: \(DeviceFamily.all.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                parsed.family = family
            } else if device != nil || base != nil || mainsPowered {
                throw ValidationError("--device, --base and --mains-powered go with --preset")
            }
            // The same checks as an import's columns and the API's members.
            do {
                let given = try ValueFormat.fields(
                    value: value, map: map, unit: nil, decimals: decimals.map { "\($0)" }, range: range,
                    bands: bands, knownDefaults: false)
                (parsed.path, parsed.map, parsed.range, parsed.bands) = (
                    given.path, given.map, given.range, given.bands
                )
            } catch {
                throw ValidationError("--\(error)")
            }
            return parsed
        }
    }

    /// What the sensor `name` is set up with: the preset's setup (if any), then each option given on top.
    func setup(
        for name: String, kind: SensorKind?, start: DeviceFamily.Setup? = nil
    ) throws -> DeviceFamily.Setup? {
        let parsed = try parsed
        var setup = start
        if let family = parsed.family {
            do {
                setup = try family.setup(
                    device: device ?? name, base: base, value: parsed.path, batteryPowered: mainsPowered ? false : nil)
            } catch {
                throw ValidationError("--preset \(family): \(error)")
            }
        } else if parsed.path != nil || map != nil || unit != nil || decimals != nil || range != nil
            || bands != nil || availability != nil || kind != nil
        {
            if setup == nil {
                // A value path alone: the known field's map and unit, as a preset would.
                let known = parsed.path.flatMap(KnownField.field(at:))
                setup = DeviceFamily.Setup(
                    topic: "", kind: known?.kind ?? .status, format: known?.format(path: parsed.path) ?? ValueFormat(),
                    availability: nil, silenceTimeout: nil)
            }
            if let path = parsed.path { setup?.format.path = path }
        }
        guard var setup else { return nil }
        if let kind { setup.kind = kind }
        if let map = parsed.map { setup.format.map = map }
        if let unit { setup.format.unit = unit.isEmpty ? nil : unit }
        if let decimals { setup.format.decimals = decimals }
        if let range = parsed.range { setup.format.range = range }
        if bands != nil { setup.format.bands = parsed.bands }
        if let availability { setup.availability = availability.isEmpty ? nil : availability }
        if setup.format.bands != nil && setup.kind != .numeric {
            throw ValidationError("--bands name ranges of a number: they are for numeric sensors (--kind numeric)")
        }
        if setup.kind == .particulate && !setup.format.isEmpty {
            throw ValidationError(
                "a particulate sensor reads its own formats (the hub's JSON, Tasmota's, a number): --value, --map,"
                    + " --unit, --decimals, --range and --bands are for status and numeric sensors")
        }
        return setup
    }
}
