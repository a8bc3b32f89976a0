import Foundation
import HubSupport

/// Finds home devices in what the broker carries, and the sensor each would make. A value type with no I/O: it
/// takes messages and says which new devices each one revealed. `hubctl discover` and hubd's `discovery:` both
/// run on it.
///
/// What it reads, per family (anything else, and any topic of another shape, is no device):
/// - Zigbee2MQTT: the retained `<base>/bridge/devices` list (friendly names with `/`, power source, model); without
///   it, state topics `<base>/<name>` whose JSON has a field a sensor follows.
/// - Tasmota: `tele/<topic>/SENSOR` (and `tele/<topic>/<device>/SENSOR`, Zigbee2Tasmota's `SetOption89 1`).
/// - ESPHome: `<node>/sensor/<object_id>/state` (a number) and `<node>/binary_sensor/<object_id>/state` (ON/OFF).
/// - Shelly Gen2+: `<prefix>/status/<component>:<id>`, JSON with that `id`: temperature, humidity, illuminance,
///   switch and input components (the device's own: `sys`, `wifi`, `devicepower`… are not sensors).
/// - Shelly Gen1: `shellies/<id>/sensor/<name>` (a value the hub knows: temperature, humidity, state, flood, …),
///   `shellies/<id>/relay/<n>` (`on`/`off`), `…/relay/<n>/power` and `shellies/<id>/input/<n>` (`0`/`1`).
public struct DeviceDiscovery: Sendable {
    public let families: [DeviceFamily]
    public let zigbee2mqttBases: [String]
    /// Whether to keep each device's last value (for `hubctl discover`'s table; hubd does without).
    public var tracksValues = true
    /// At most this many devices are kept, so that a flood of topics can't grow it without bound.
    public static let maximumDevices = 10_000
    /// The longest `bridge/devices` list read (a few KiB a device); state payloads are held to
    /// `ValueFormat.maximumPayload`.
    public static let maximumBridgeList = 8 << 20

    /// In the order they were heard.
    public private(set) var devices: [DiscoveredDevice] = []
    /// Devices of a Zigbee2MQTT list that make no sensor, and why (the coordinator is not named).
    public private(set) var skipped: [Skipped] = []
    /// Positions in `devices`, by the sensor's topic.
    private var positions: [String: Int] = [:]
    /// Devices guessed from state topics, until their bridge's list says better.
    private var guessed: Set<String> = []
    private var bridgesHeard: Set<String> = []

    public struct Skipped: Sendable, Hashable {
        public var family: DeviceFamily
        public var device: String
        public var reason: String
    }

    /// - Parameter zigbee2mqttBases: Zigbee2MQTT's base topics (its `mqtt.base_topic`).
    public init(families: [DeviceFamily] = DeviceFamily.all, zigbee2mqttBases: [String] = ["zigbee2mqtt"]) {
        self.families = families
        self.zigbee2mqttBases = zigbee2mqttBases.map {
            String($0.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
        }
    }

    /// The topic filters to subscribe to, each family's own (never `#`): `listFilters`, then `stateFilters`.
    public var filters: [String] { listFilters + stateFilters }

    /// Zigbee2MQTT's device lists. Subscribed to before `stateFilters`, in a SUBSCRIBE of their own, their retained
    /// copies arrive before any state of the same bridge, so no device is guessed from its state first.
    public var listFilters: [String] {
        families.contains(.zigbee2mqtt) ? zigbee2mqttBases.map { "\($0)/bridge/devices" } : []
    }

    /// Where devices publish their states.
    public var stateFilters: [String] {
        var filters: [String] = []
        if families.contains(.zigbee2mqtt) { filters += zigbee2mqttBases.map { "\($0)/+" } }
        if families.contains(.tasmota) { filters += ["tele/+/SENSOR", "tele/+/+/SENSOR"] }
        if families.contains(.esphome) { filters += ["+/sensor/+/state", "+/binary_sensor/+/state"] }
        if families.contains(.shelly) {
            filters += [
                "+/status/+", "shellies/+/sensor/+", "shellies/+/relay/+", "shellies/+/relay/+/power",
                "shellies/+/input/+",
            ]
        }
        return filters
    }

    /// Whether `topic` has the shape of one discovery reads.
    /// Whether `topic` is one of discovery's: a device's, or anything else its filters bring (Shelly's
    /// `<prefix>/status/sys`), which is then not counted as a message for no sensor.
    public func listens(to topic: String) -> Bool {
        route(topic) != nil || filters.contains { TopicRules.matches(filter: $0, topic: topic) }
    }

    /// Takes one message; returns the devices it revealed that were not known before.
    /// - Parameter retained: whether the broker sent its retained copy (the value may be old).
    public mutating func take(topic: String, payload: [UInt8], retained: Bool) -> [DiscoveredDevice] {
        if let position = positions[topic] {
            if tracksValues { note(payload, retained: retained, at: position) }
            return []
        }
        guard let route = route(topic), !payload.isEmpty else { return [] }
        if case .bridge(let base) = route {
            guard payload.count <= Self.maximumBridgeList, let tree = try? JSONTree.parse(payload),
                let listings = Zigbee2MQTTListing.read(tree)
            else { return [] }
            return takeBridgeList(listings, base: base)
        }
        guard payload.count <= ValueFormat.maximumPayload, devices.count < Self.maximumDevices,
            let device = device(route, payload)
        else { return [] }
        positions[device.setup.topic] = devices.count
        devices.append(device)
        if case .zigbeeState = route { guessed.insert(device.setup.topic) }
        note(payload, retained: retained, at: devices.count - 1)
        return [devices[devices.count - 1]]
    }

    // MARK: Topics

    enum Route {
        case bridge(base: String)
        case zigbeeState(base: String, name: String)
        case tasmota(device: String)
        case esphome(node: String, component: String, object: String)
        case shelly(prefix: String, component: String, id: Int)
        /// `shellies/<device>`: `<id>/sensor/<name>`, `<id>/relay/<n>[/power]`, `<id>/input/<n>`.
        case shellyGen1(device: String)
    }

    func route(_ topic: String) -> Route? {
        if families.contains(.zigbee2mqtt) {
            for base in zigbee2mqttBases where topic.hasPrefix(base + "/") {
                let rest = topic.dropFirst(base.count + 1)
                if rest == "bridge/devices" { return .bridge(base: base) }
                if !rest.isEmpty && !rest.contains("/") && rest != "bridge" {
                    return .zigbeeState(base: base, name: String(rest))
                }
            }
        }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !levels.contains(where: \.isEmpty) else { return nil }
        if families.contains(.tasmota) && levels.first == "tele" && levels.last == "SENSOR"
            && (levels.count == 3 || levels.count == 4)
        {
            return .tasmota(device: levels[1..<(levels.count - 1)].joined(separator: "/"))
        }
        if families.contains(.esphome) && levels.count == 4 && levels[3] == "state"
            && (levels[1] == "sensor" || levels[1] == "binary_sensor")
        {
            return .esphome(node: levels[0], component: levels[1], object: levels[2])
        }
        if families.contains(.shelly) && levels.count == 3 && levels[1] == "status",
            let colon = levels[2].firstIndex(of: ":"), let id = Int(levels[2][levels[2].index(after: colon)...]),
            id >= 0, levels[2][..<colon].allSatisfy({ $0.isASCII && $0.isLowercase })
        {
            return .shelly(prefix: levels[0], component: String(levels[2][..<colon]), id: id)
        }
        // Which Gen1 topics are values is the preset's to say (`device` asks it): one list of their shapes.
        if families.contains(.shelly) && levels.first == "shellies" && levels.count >= 4 {
            return .shellyGen1(device: levels.dropFirst().joined(separator: "/"))
        }
        return nil
    }

    // MARK: Families

    /// The device a state message shows, if it is one.
    private func device(_ route: Route, _ payload: [UInt8]) -> DiscoveredDevice? {
        switch route {
        case .bridge:
            return nil
        case .zigbeeState(let base, let name):
            // The bridge's list names every device (with its power source): state topics are only a fallback.
            guard !bridgesHeard.contains(base), case .object(let members)? = try? JSONTree.parse(payload),
                let (path, reason) = PrimaryField.choose(
                    members.compactMap { PrimaryField.Candidate([.key($0.key)], name: $0.key, value: $0.value) }),
                let setup = try? DeviceFamily.zigbee2mqtt.setup(device: name, base: base, value: path)
            else { return nil }
            return make(
                .zigbee2mqtt, name, setup: setup, named: name,
                reason: reason + "; no bridge/devices list was heard, so a battery is assumed", base: base)
        case .tasmota(let device):
            guard let tree = try? JSONTree.parse(payload), case .object(let members) = tree else { return nil }
            var candidates: [PrimaryField.Candidate] = []
            var zigbee = false
            if case .object(let reporting)? = tree["ZbReceived"], case .object(let fields)? = reporting.first?.value {
                // Zigbee2Tasmota keys each report by the device's short address: `*` takes whichever reports.
                zigbee = true
                candidates = fields.compactMap {
                    PrimaryField.Candidate([.key("ZbReceived"), .any, .key($0.key)], name: $0.key, value: $0.value)
                }
            } else {
                for member in members {
                    guard case .object(let fields) = member.value else { continue }
                    candidates += fields.compactMap {
                        PrimaryField.Candidate([.key(member.key), .key($0.key)], name: $0.key, value: $0.value)
                    }
                }
            }
            guard let (path, reason) = PrimaryField.choose(candidates),
                let setup = try? DeviceFamily.tasmota.setup(device: device, value: path)
            else { return nil }
            guard zigbee, case .key(let field)? = path.segments.last else {
                return make(.tasmota, device, setup: setup, named: device, reason: reason)
            }
            return make(
                .tasmota, device, setup: setup, named: "\(device) \(field.lowercased())",
                reason: reason
                    + "; Zigbee2Tasmota sends all its devices on this topic, so the sensor follows any that reports"
                    + " it (SetOption89 1 gives each device a topic of its own)")
        case .esphome(let node, let component, let object):
            let text = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let plausible =
                component == "sensor"
                ? Double(text) != nil || text.lowercased() == "none" : ["on", "off"].contains(text.lowercased())
            guard plausible, let setup = try? DeviceFamily.esphome.setup(device: "\(node)/\(component)/\(object)")
            else { return nil }
            // `livingroom/sensor/living_room_temperature`: the object id often repeats the node's name already.
            func squeezed(_ text: String) -> String { text.lowercased().filter { $0 != "_" && $0 != "-" } }
            let name = squeezed(object).hasPrefix(squeezed(node)) ? object : "\(node) \(object)"
            return make(
                .esphome, "\(node)/\(component)/\(object)", setup: setup, named: name,
                reason: "ESPHome publishes each entity's value alone, on a topic of its own")
        case .shelly(let prefix, let component, let id):
            guard component != "devicepower", let tree = try? JSONTree.parse(payload),
                case .number(let number, _)? = tree["id"], number == Double(id),
                let setup = try? DeviceFamily.shelly.setup(device: "\(prefix)/\(component):\(id)"),
                let path = setup.format.path, path.find(in: tree) != nil
            else { return nil }
            return make(
                .shelly, "\(prefix)/\(component):\(id)", setup: setup,
                named: "\(prefix) \(component)" + (id == 0 ? "" : " \(id)"),
                reason: "a Shelly \(component) component reports '\(path)'")
        case .shellyGen1(let device):
            // The topic says what the value is; the payload must be one of it (a number, `open`, `on`…).
            guard let setup = try? DeviceFamily.shelly.setup(device: device),
                let text = String(validating: payload, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines),
                setup.kind == .numeric
                    ? (try? setup.format.decode(text, numeric: true).get()) != nil
                    : setup.format.map?.status(for: text) != nil
            else { return nil }
            let levels = device.split(separator: "/")
            let what =
                // A Door/Window's `sensor/state` is its door.
                levels[1] == "sensor"
                ? (levels[2] == "state" ? "door" : String(levels[2]))
                : levels.count == 4
                    ? "power" + (levels[2] == "0" ? "" : " \(levels[2])")
                    : String(levels[1]) + (levels[2] == "0" ? "" : " \(levels[2])")
            return make(
                .shelly, device, setup: setup, named: "\(levels[0]) \(what)",
                reason: "a Shelly Gen1 device publishes each value alone, on a topic of its own")
        }
    }

    private func make(
        _ family: DeviceFamily, _ device: String, setup: DeviceFamily.Setup, named name: String, reason: String,
        base: String? = nil
    ) -> DiscoveredDevice? {
        guard let (sensorName, note) = SensorRules.name(fromDevice: name), (try? SensorRules.topic(setup.topic)) != nil,
            (try? setup.availability.map(SensorRules.topic)) != nil
        else { return nil }
        return DiscoveredDevice(
            family: family, device: device, base: base, name: sensorName, nameNote: note, setup: setup,
            reason: reason)
    }

    // MARK: Zigbee2MQTT's device list

    private mutating func takeBridgeList(_ listings: [Zigbee2MQTTListing], base: String) -> [DiscoveredDevice] {
        bridgesHeard.insert(base)
        skipped.removeAll { $0.family == .zigbee2mqtt && $0.device.hasPrefix(base + "/") }
        var found: [DiscoveredDevice] = []
        var listed: Set<String> = []
        for listing in listings {
            func skip(_ reason: String) {
                skipped.append(Skipped(family: .zigbee2mqtt, device: "\(base)/\(listing.friendlyName)", reason: reason))
            }
            if let reason = listing.skipped {
                skip(reason)
                continue
            }
            guard let (path, reason) = PrimaryField.choose(listing.fields) else {
                skip("none of its fields is one a sensor follows (\(PrimaryField.listed))")
                continue
            }
            guard
                let setup = try? DeviceFamily.zigbee2mqtt.setup(
                    device: listing.friendlyName, base: base, value: path, batteryPowered: listing.batteryPowered),
                var device = make(
                    .zigbee2mqtt, listing.friendlyName, setup: setup, named: listing.friendlyName, reason: reason,
                    base: base)
                    ?? listing.address.flatMap({
                        make(.zigbee2mqtt, listing.friendlyName, setup: setup, named: $0, reason: reason, base: base)
                    })
            else {
                skip("its friendly name makes no topic or sensor name")
                continue
            }
            device.model = listing.model
            device.vendor = listing.vendor
            device.description = listing.description
            device.address = listing.address
            device.batteryPowered = listing.batteryPowered
            listed.insert(setup.topic)
            if let position = positions[setup.topic] {
                // Guessed from its state before the list came, or listed before: the list knows better.
                device.value = devices[position].value
                device.retained = devices[position].retained
                devices[position] = device
                guessed.remove(setup.topic)
            } else if devices.count < Self.maximumDevices {
                positions[setup.topic] = devices.count
                devices.append(device)
                found.append(device)
            }
        }
        // What was guessed from a state topic the list does not name (a group, an old retained message) goes.
        let stale = guessed.filter { topic in
            devices[positions[topic]!].base == base && !listed.contains(topic)
        }
        if !stale.isEmpty {
            devices.removeAll { stale.contains($0.setup.topic) }
            guessed.subtract(stale)
            positions = Dictionary(uniqueKeysWithValues: devices.enumerated().map { ($1.setup.topic, $0) })
        }
        return found
    }

    // MARK: Values

    private mutating func note(_ payload: [UInt8], retained: Bool, at position: Int) {
        let setup = devices[position].setup
        guard let text = String(validating: payload, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty, case .success(let decoded) = setup.format.decode(text, numeric: setup.kind == .numeric)
        else { return }
        devices[position].value = setup.kind == .numeric ? setup.format.withUnit(decoded.status) : decoded.status
        devices[position].retained = retained
    }
}
