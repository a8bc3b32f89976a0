import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// Real home devices end to end (issue 17): sensors added with presets, payloads shaped like each family's
/// documentation sent through a real Mosquitto to the built hubd, the registry and the log read back.
@Suite(.timeLimit(.minutes(2)))
struct DeviceHubTests {
    static let fastFlush = "store:\n  flush_interval: 100ms\n"

    /// The events of `sensor` in the history, a CSV line each.
    private func events(_ hub: RunningHub, _ sensor: String) async throws -> [String] {
        let result = try await hub.hubctl.run("events", sensor, "--csv")
        return result.standardOutput.split(separator: "\n").dropFirst().map(String.init)
    }

    @Test func aZigbee2MQTTDoorSensorShowsClosedOpenAndItsBatteryWithoutAnEventForIt() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.use(broker)
            let added = try await hub.hubctl.run(
                "sensors", "add", "front door", "--preset", "zigbee2mqtt", "--value", "contact")
            #expect(added.status == 0, "\(added.standardError)")
            try await hub.startAndWaitUntilReady()
            let topic = "zigbee2mqtt/front door"
            try await publish(broker, topic, #"{"battery":97,"contact":true,"linkquality":120,"voltage":3000}"#)
            try await hub.waitForLog("sensor event", "sensor=front door", "from=Waiting", "to=closed")
            // A battery report alone: attributes change, the status does not, and no one is told.
            try await publish(broker, topic, #"{"battery":96,"contact":true,"linkquality":117,"voltage":2995}"#)
            try await eventually("the new battery level is stored") {
                try hub.sensor("front door")?.attributes["battery"] == .number(96)
            }
            try await publish(broker, topic, #"{"battery":96,"contact":false,"linkquality":117,"voltage":2995}"#)
            try await hub.waitForLog("sensor event", "sensor=front door", "from=closed", "to=open")
            // The device's availability topic: offline, then Z2M's JSON form of online.
            try await publish(broker, "\(topic)/availability", "offline", retain: true)
            try await hub.waitForLog("sensor event", "sensor=front door", "event=offline", "to=offline")
            try await publish(broker, "\(topic)/availability", #"{"state":"online"}"#, retain: true)
            try await hub.waitForLog("sensor event", "sensor=front door", "event=recovered", "to=open")
            // Four events: Waiting → closed, closed → open, offline, back; none for the battery.
            try await eventually("the history has the four events") { try await events(hub, "front door").count == 4 }
            // --limit shows the newest (issue 52: it showed the oldest), oldest first, and says there are more.
            let limited = try await hub.hubctl.run("events", "front door", "--csv", "--limit", "3")
            let rows = limited.standardOutput.split(separator: "\n").dropFirst()
            #expect(rows.count == 3 && limited.status == 0)
            #expect(!limited.standardOutput.contains("Waiting"), "the oldest event is the one left out")
            #expect(rows.last?.contains("recovered") == true, "\(rows)")
            #expect(limited.standardError.contains("showing the newest 3 events since 24h ago; there are more"))
            let all = try await hub.hubctl.run("events", "front door", "--csv", "--limit", "4")
            #expect(all.standardError.isEmpty, "\(all.standardError)")
            // The registry is written every flush interval, after the history may have the events.
            try await eventually("the registry has the last status") { try hub.sensor("front door")?.status == "open" }
            let sensor = try #require(try hub.sensor("front door"))
            #expect(sensor.attributes.map(\.name) == ["battery", "linkquality", "voltage"])
            let show = try await hub.hubctl.run("sensors", "show", "front door")
            #expect(show.standardOutput.contains("Map:           true=closed,false=open"))
            #expect(show.standardOutput.contains("  battery:     96"))
            #expect(await hub.stop() == 0)
        }
    }

    @Test func badPayloadsAreRejectedByReasonAndNeverBecomeTheStatus() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.use(broker)
            _ = try await hub.hubctl.run("sensors", "add", "cellar", "--topic", "home/cellar", "--value", "temperature")
            try await hub.startAndWaitUntilReady()
            for payload in [
                "warm", #"{"humidity":40}"#, #"{"temperature":"hot"}"#, #"{"temperature":{"c":1}}"#,
                #"{"temperature":500}"#, #"{"temperature":21.46}"#,
            ] {
                try await publish(broker, "home/cellar", payload)
            }
            try await eventually("the good reading is the status") { try hub.sensor("cellar")?.status == "21.46" }
            try await eventually("every bad one is counted by its reason") {
                let rejected = hub.status?.counters.rejected ?? [:]
                return rejected["not JSON, for a sensor with a value path"] == 1
                    && rejected["the value path is not in the payload"] == 1
                    && rejected["not a number, for a numeric sensor"] == 1
                    && rejected["the value is not of the sensor's type"] == 1
                    && rejected["a number outside the sensor's range"] == 1
            }
            try await hub.waitForLog("rejected a message", "reason=not JSON")
            #expect(try hub.sensor("cellar")?.kind == .numeric)
            await hub.stop()
        }
    }

    @Test func aThresholdAlertsOncePerCrossingAndClearsPastItsHysteresis() async throws {
        let configuration =
            Self.fastFlush + """
                thresholds:
                  - name: greenhouse too hot
                    sensors: [green*]
                    above: 30
                    hysteresis: 1
                  - name: battery low
                    attribute: battery
                    below: 15
                """
        try await withBroker { broker in
            let hub = try RunningHub(configuration: configuration)
            try await hub.use(broker)
            let added = try await hub.hubctl.run(
                "sensors", "add", "greenhouse", "--preset", "tasmota", "--device", "tasmota_5A1B2C")
            #expect(added.status == 0, "\(added.standardError)")
            try await hub.startAndWaitUntilReady()
            let topic = "tele/tasmota_5A1B2C/SENSOR"
            func send(_ temperature: Double) async throws {
                try await publish(
                    broker, topic,
                    #"{"Time":"2024-05-01T10:00:00","AM2301":{"Temperature":\#(temperature),"Humidity":32.4},"TempUnit":"C"}"#
                )
            }
            for value: Double in [25, 31.2, 33, 29.5, 31, 28.9] { try await send(value) }
            try await hub.waitForLog("sensor event", "event=threshold", "to=clear")
            try await eventually("the last value is the status") { try hub.sensor("greenhouse")?.status == "28.9" }
            // Numbers are readings, not events: the two crossings are the sensor's only events.
            try await eventually("the history has both crossings") { try await events(hub, "greenhouse").count == 2 }
            let history = try await events(hub, "greenhouse")
            #expect(history[0].contains("greenhouse too hot: 31.2 °C is above 30"), "\(history)")
            #expect(history[1].contains("greenhouse too hot: 28.9 °C is back from above 30"), "\(history)")
            await hub.stop()
        }
    }

    /// Every family through its preset, with the payloads of `DeviceFixtures` (each written from the family's own
    /// documentation): ESPHome's plain values and node status, Shelly's component JSON and `online`.
    @Test func esphomeAndShellyDevicesThroughTheirPresets() async throws {
        try await withBroker { broker in
            let hub = try RunningHub(configuration: Self.fastFlush)
            try await hub.use(broker)
            try await hub.add(arguments: [
                ["lounge", "--preset", "esphome", "--device", "livingroom/living_room_temperature"],
                ["balcony", "--preset", "esphome", "--device", "livingroom/binary_sensor/balcony_door"],
                ["bath", "--preset", "shelly", "--device", "\(DeviceFixtures.shellyHTPrefix)/temperature:0"],
                ["kettle", "--preset", "shelly", "--device", "\(DeviceFixtures.shellySwitchPrefix)/switch:0"],
            ])
            try await hub.startAndWaitUntilReady()
            try await publish(broker, DeviceFixtures.esphomeTemperatureTopic, DeviceFixtures.esphomeTemperature)
            try await publish(broker, DeviceFixtures.esphomeDoorTopic, DeviceFixtures.esphomeBinaryOn)
            try await publish(broker, DeviceFixtures.shellyTemperatureTopic, DeviceFixtures.shellyTemperature)
            try await publish(broker, DeviceFixtures.shellySwitchTopic, DeviceFixtures.shellySwitchOn)
            try await eventually("every device's value is its sensor's status") {
                try hub.sensor("lounge")?.status == DeviceFixtures.esphomeTemperature
                    && hub.sensor("balcony")?.status == "open" && hub.sensor("bath")?.status == "19.8"
                    && hub.sensor("kettle")?.status == "on"
            }
            #expect(try hub.sensor("bath")?.attributes.map(\.name) == ["id", "tF"])
            // ESPHome's node says offline: both of its sensors go, each with its own event; back with their status.
            try await publish(broker, DeviceFixtures.esphomeStatusTopic, DeviceFixtures.esphomeStatusOffline)
            try await hub.waitForLog("sensor event", "sensor=balcony", "event=offline")
            try await eventually("both ESPHome sensors are offline") {
                try hub.sensor("lounge")?.status == "offline" && hub.sensor("balcony")?.status == "offline"
            }
            try await publish(broker, DeviceFixtures.esphomeStatusTopic, DeviceFixtures.esphomeStatusOnline)
            try await eventually("both are back as they were") {
                try hub.sensor("lounge")?.status == DeviceFixtures.esphomeTemperature
                    && hub.sensor("balcony")?.status == "open"
            }
            try await publish(broker, DeviceFixtures.shellyOnlineTopic, DeviceFixtures.shellyOffline)
            try await eventually("the Shelly switch is offline") { try hub.sensor("kettle")?.status == "offline" }
            #expect(try hub.sensor("bath")?.status == "19.8")  // another device: its own availability topic
            let list = try await hub.hubctl.run("sensors", "list")
            #expect(list.standardOutput.contains("19.8 °C"), "\(list.standardOutput)")
            await hub.stop()
        }
    }
}
