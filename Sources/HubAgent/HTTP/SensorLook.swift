import HubCore
import HubNotify

/// How the dashboard shows a sensor at a glance, decided here once (the page only paints it): its state, what to
/// flag about its device, and the room it is grouped under. A value with no I/O: the sensor, the open alerts and the
/// alert setup in, the look out.
struct SensorLook: Sendable, Hashable {
    enum State: String, Sendable {
        /// It has a firing alert, or its status is one an alerting rule fires on (`statuses: [open]`).
        case alert
        /// Offline: its availability topic said so, or it was silent past its timeout.
        case offline
        /// No message yet.
        case waiting
        /// Anything else.
        case fine
    }

    var state: State
    /// "battery 12 %", "weak signal (linkquality 18)": a device that needs a person soon.
    var flags: [String]
    /// Its `room` label (`alerts.sensors` in hubd.yaml), which the page groups by.
    var room: String?

    /// A battery at or below this many per cent is flagged.
    static let lowBattery = 20.0
    /// Zigbee's link quality (0–255) at or below this is flagged: Zigbee2MQTT's map shows such links red.
    static let weakLinkQuality = 30.0
    /// Wi-Fi's RSSI (dBm) at or below this is flagged: below about −80 dBm messages start to be lost.
    static let weakRSSI = -80.0

    init(_ sensor: Sensor, firing: Set<String>, setup: AlertBook.Setup?) {
        if firing.contains(sensor.name) || setup?.alarms(sensor: sensor.name, status: sensor.status) == true {
            state = .alert
        } else if sensor.status == "offline" {
            state = .offline
        } else if sensor.status == Sensor.waiting {
            state = .waiting
        } else {
            state = .fine
        }
        room = setup?.facts(sensor.name).labels["room"]
        flags = Self.flags(sensor.attributes)
    }

    /// What the device's attributes say needs a person: a low battery, a weak link.
    static func flags(_ attributes: SensorAttributes) -> [String] {
        var flags: [String] = []
        for attribute in attributes {
            switch (attribute.name.lowercased(), attribute.value) {
            case ("battery", .number(let percent)) where percent <= lowBattery:
                flags.append("battery \(ValueFormat().format(percent)) %")
            case ("battery_low", .bool(true)):
                flags.append("battery low")
            case ("linkquality", .number(let quality)) where quality <= weakLinkQuality:
                flags.append("weak signal (link quality \(ValueFormat().format(quality)))")
            case ("rssi", .number(let rssi)) where rssi <= weakRSSI, ("signal", .number(let rssi)) where rssi <= weakRSSI:
                flags.append("weak signal (\(ValueFormat().format(rssi)) dBm)")
            default: continue
            }
        }
        return flags
    }
}
