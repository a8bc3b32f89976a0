import Foundation
import HubSupport

/// What `hubctl discover` (and the dashboard's discovery) heard, set against the registry: a table and the commands
/// for people (`hubctl`'s text), JSON for scripts and the dashboard.
public struct DiscoveryReport: Sendable {
    public struct Row: Sendable {
        public var device: DiscoveredDevice
        /// The name the sensor gets (numbered when another sensor has the device's), or has already.
        public var sensor: String
        /// The sensor already on the device's topic.
        public var existing: String?
        /// Why it can't be added, when it can't.
        public var problem: String?
    }

    public var rows: [Row]
    public var skipped: [DeviceDiscovery.Skipped]
    /// What `--add` added.
    public var added: [Sensor] = []

    /// The devices without a sensor that can have one.
    public var new: [DiscoveredDevice] { rows.filter { $0.existing == nil && $0.problem == nil }.map(\.device) }

    public init(_ discovery: DeviceDiscovery, document: DefaultsDocument) {
        var preview = document
        rows = discovery.devices.map { device in
            if let existing = document.sensor(onTopic: device.setup.topic) {
                return Row(device: device, sensor: existing.name, existing: existing.name)
            }
            do throws(RegistryError) {
                return Row(device: device, sensor: try preview.addDiscovered(device).name)
            } catch {
                return Row(device: device, sensor: device.name, problem: error.description)
            }
        }
        skipped = discovery.skipped
    }

    /// `hubctl sensors add …` for the row, quoted for a POSIX shell.
    public static func command(_ row: Row) -> String {
        (["hubctl", "sensors", "add", row.sensor] + row.device.presetArguments).enumerated().map {
            $0.offset < 3 ? $0.element : shellQuoted($0.element)
        }.joined(separator: " ")
    }

    // MARK: For scripts

    /// `{"devices": [...], "skipped": [...]}`: every device with its sensor's setup, its state in the registry
    /// (`new`, `exists`, `added`, `refused`) and the command that adds it.
    public var json: String {
        var writer = JSONWriter()
        writer.raw("{\"devices\": [")
        for (index, row) in rows.enumerated() {
            writer.raw(index == 0 ? "\n  " : ",\n  ")
            write(row, into: &writer)
        }
        writer.raw(rows.isEmpty ? "],\n" : "\n],\n")
        writer.raw("\"skipped\": [")
        for (index, skipped) in skipped.enumerated() {
            writer.raw(index == 0 ? "\n  " : ",\n  ")
            var first = true
            writer.raw("{")
            writer.key("family", first: &first)
            writer.string(skipped.family.rawValue)
            writer.key("device", first: &first)
            writer.string(skipped.device)
            writer.key("reason", first: &first)
            writer.string(skipped.reason)
            writer.raw("}")
        }
        writer.raw(skipped.isEmpty ? "]}\n" : "\n]}\n")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private func write(_ row: Row, into writer: inout JSONWriter) {
        let device = row.device
        let setup = device.setup
        var first = true
        func field(_ key: String, _ value: String?) {
            writer.key(key, first: &first)
            if let value { writer.string(value) } else { writer.raw("null") }
        }
        writer.raw("{")
        field("family", device.family.rawValue)
        field("device", device.device)
        field("base", device.base)
        field("sensor", row.sensor)
        field("topic", setup.topic)
        field("kind", setup.kind.rawValue)
        field("valuePath", setup.format.path?.description)
        field("map", setup.format.map?.description)
        field("unit", setup.format.unit)
        field("availability", setup.availability)
        writer.key("silenceTimeout", first: &first)
        if let timeout = setup.silenceTimeout { writer.number(timeout.seconds) } else { writer.raw("null") }
        field("value", device.value)
        writer.key("retained", first: &first)
        writer.bool(device.retained)
        field("model", device.model)
        field("vendor", device.vendor)
        field("description", device.description)
        field("address", device.address)
        field("reason", device.reason)
        field("nameNote", device.nameNote)
        let added = self.added.contains { $0.topic == setup.topic }
        field(
            "registry",
            row.existing != nil ? "exists" : added ? "added" : row.problem != nil ? "refused" : "new")
        field("existingSensor", row.existing)
        field("problem", row.problem)
        field("command", Self.command(row))
        writer.raw("}")
    }
}

/// `text` as one word for a POSIX shell: as it is when it holds nothing the shell reads, else in single quotes.
public func shellQuoted(_ text: String) -> String {
    let plain =
        !text.isEmpty
        && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "_-./:=@%+,".unicodeScalars.contains(scalar))
        }
    return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
