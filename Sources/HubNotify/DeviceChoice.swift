import Foundation
import HubCore
import HubSupport

/// What one device wants to hear about: some sensors (names or globs), some kinds of event.
///
/// A value with no I/O, stored in the clear beside the device's sealed address. Empty lists mean everything, as in
/// a rule's `sensors:` and `events:`; the globs are the rules' globs (`door*`, `kitchen`, case ignored).
public struct DeviceChoice: Sendable, Hashable, Codable {
    /// Sensor names or globs; every sensor when empty.
    public var sensors: [String]
    /// Event kinds; every kind when empty.
    public var kinds: [SensorEvent.Kind]

    /// The most sensor patterns or kinds one device keeps: a choice is for a person to read.
    public static let maximumItems = 100

    public init(sensors: [String] = [], kinds: [SensorEvent.Kind] = []) {
        self.sensors = sensors
        self.kinds = kinds
    }

    /// Every event of every sensor: a device that chose nothing.
    public static let everything = DeviceChoice()

    /// Whether this is `everything`.
    public var isEverything: Bool { sensors.isEmpty && kinds.isEmpty }

    /// Whether `event` goes to this device; `hubctl notify test` reaches every device, to check it.
    public func wants(_ event: SensorEvent) -> Bool {
        if event.kind == .test { return true }
        return (kinds.isEmpty ? event.kind.isTakenByDefault : kinds.contains(event.kind))
            && glob(anyOf: sensors, event.sensor)
    }

    /// This choice with the parts given replaced, checked: what `hubctl devices edit` and `PATCH` do.
    /// - Parameters:
    ///   - sensors: names or globs (`door*`); `[]` for every sensor, `nil` to keep the current ones.
    ///   - events: event names as rules write them (`changed`, `offline`, …); `[]` for every kind, `nil` to keep.
    public func replacing(sensors: [String]? = nil, events: [String]? = nil) throws(DeviceError) -> DeviceChoice {
        var choice = self
        if let sensors { choice.sensors = sensors }
        if let events {
            choice.kinds = []
            for text in events {
                guard let kind = SensorEvent.Kind(chosen: text) else {
                    throw .invalidChoice("'\(text)' is not an event kind; use \(SensorEvent.Kind.choosable)")
                }
                choice.kinds.append(kind)
            }
        }
        return try choice.validated()
    }

    /// The choice trimmed and de-duplicated, or why it can't be kept: an empty or unprintable glob, an unknown kind.
    public func validated() throws(DeviceError) -> DeviceChoice {
        var choice = DeviceChoice()
        for raw in sensors {
            let pattern = raw.trimmingCharacters(in: .whitespaces)
            guard !pattern.isEmpty else {
                throw .invalidChoice("an empty sensor name or glob; name sensors like kitchen or door*")
            }
            guard pattern.count <= 200,
                !pattern.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw .invalidChoice(
                    "the sensor glob '\(pattern.prefix(40))…' is not a name: too long or has control characters")
            }
            if !choice.sensors.contains(pattern) { choice.sensors.append(pattern) }
        }
        for kind in kinds where !choice.kinds.contains(kind) {
            guard SensorEvent.Kind.choosableKinds.contains(kind) else {
                throw .invalidChoice("'\(kind)' is not an event kind; use \(SensorEvent.Kind.choosable)")
            }
            choice.kinds.append(kind)
        }
        guard choice.sensors.count <= Self.maximumItems, choice.kinds.count <= Self.maximumItems else {
            throw .invalidChoice("at most \(Self.maximumItems) sensors or globs")
        }
        return choice
    }

    /// What lists show: `door*, kitchen` or `all`.
    public var sensorsText: String { sensors.isEmpty ? "all" : sensors.joined(separator: ",") }
    /// What lists show: `changed, offline` or `all`.
    public var kindsText: String { kinds.isEmpty ? "all" : kinds.map(\.rawValue).joined(separator: ",") }

    enum CodingKeys: String, CodingKey {
        case sensors
        // "events", as rules, hubctl and the API call them.
        case kinds = "events"
    }
}

extension SensorEvent.Kind {
    /// The kinds a rule or a device may name (`test` reaches everything anyway).
    package static let choosableKinds = all.filter { $0 != .test }
    /// The choosable kinds' names, for error messages.
    package static let choosable: String = {
        let names = choosableKinds.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }()

    /// The kind `text` names in a rule's `events:` or a device's choice (with the older aliases: `status`,
    /// `change`, `silence`, `recovery`); `nil` when it names none.
    package init?(chosen text: String) {
        let aliases = ["status": "changed", "change": "changed", "silence": "silent", "recovery": "recovered"]
        let name = text.trimmingCharacters(in: .whitespaces).lowercased()
        let kind = SensorEvent.Kind(rawValue: aliases[name] ?? name)
        guard Self.choosableKinds.contains(kind) else { return nil }
        self = kind
    }
}
