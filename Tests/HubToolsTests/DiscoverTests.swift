import Foundation
import HubCore
import HubTestKit
import Mosquitto
import Testing

/// `hubctl discover` against a real broker holding what each family publishes (issue 17, item 6): the table, the
/// commands, JSON, `--add` (once), and its errors.
@Suite(.timeLimit(.minutes(2)))
struct DiscoverTests {
    typealias F = DeviceFixtures

    /// What the test's devices leave on the broker, retained, with junk beside it.
    static let retained: [(topic: String, payload: [UInt8])] = [
        (F.zigbee2mqttBridgeDevicesTopic, F.zigbee2mqttBridgeDevices),
        (F.zigbee2mqttBridgeStateTopic, F.zigbee2mqttBridgeStateOnline),
        (F.zigbee2mqttContactAvailabilityTopic, F.zigbee2mqttAvailabilityOnline),
        (F.tasmotaSensorTopic, F.tasmotaAM2301),
        (F.tasmotaLWTTopic, F.tasmotaLWTOnline), (F.esphomeTemperatureTopic, F.esphomeTemperature),
        (F.esphomeDoorTopic, F.esphomeBinaryOff), (F.esphomeStatusTopic, F.esphomeStatusOnline),
        (F.shellyTemperatureTopic, F.shellyTemperature), ("kitchen", "open"), ("home/cellar", #"{"temperature":20}"#),
    ].map { ($0.0, Array($0.1.utf8)) }

    /// The devices' retained messages on `broker`, and a hubctl whose registry points at it.
    func devices(on broker: MosquittoBroker) async throws -> Hubctl {
        try await publish(broker, Self.retained, retain: true)
        let hubctl = try Hubctl()
        let set = try await hubctl.run("broker", "set", "--host", broker.host, "--port", "\(broker.port)")
        #expect(set.status == 0, "\(set.standardError)")
        return hubctl
    }

    @Test func listsTheDevicesWithTheirSensorsCommandsAndJSON() async throws {
        try await withBroker { broker in
            let hubctl = try await devices(on: broker)
            let lounge = try await hubctl.run(
                "sensors", "add", "lounge", "--preset", "esphome", "--device", "livingroom/living_room_temperature")
            #expect(lounge.status == 0, "\(lounge.standardError)")

            let result = try await hubctl.run("discover", "--seconds", "0")
            #expect(result.status == 0, "\(result.standardError)")
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("FAMILY       DEVICE") == true, "\(result.standardOutput)")
            let door = try #require(lines.first { $0.hasPrefix("zigbee2mqtt  garden/shed door ") })
            #expect(door.contains("garden shed door") && door.contains("zigbee2mqtt/garden/shed door"))
            #expect(door.hasSuffix("status   new"), "\(door)")
            let temperature = try #require(
                lines.first { $0.hasPrefix("esphome      livingroom/sensor/living_room_temperature ") })
            #expect(temperature.contains("22.5 °C") && temperature.hasSuffix("exists (lounge)"), "\(temperature)")
            let tasmota = try #require(lines.first { $0.hasPrefix("tasmota      tasmota_A1B2C3 ") })
            #expect(tasmota.contains("22.6 °C  numeric  new"), "\(tasmota)")
            #expect(lines.filter { $0.hasSuffix("  new") }.count == 7, "\(result.standardOutput)")
            #expect(lines.contains("To add them one by one:"))
            #expect(
                lines.contains(
                    "  hubctl sensors add 'garden shed door' --preset zigbee2mqtt --device 'garden/shed door' --value contact"
                ))
            #expect(
                lines.contains(
                    "  hubctl sensors add tasmota_A1B2C3 --preset tasmota --device tasmota_A1B2C3 --value AM2301.Temperature"
                ))
            #expect(
                lines.contains {
                    $0.hasPrefix("  # Zigbee2MQTT device 'garden/shed door' (Aqara MCCGQ11LM, Door and window sensor)")
                })
            #expect(lines.contains("or all at once: hubctl discover --add"))
            // Eight devices; the plain sensor topics and Zigbee2MQTT's bridge state are none.
            #expect(lines.filter { $0.hasSuffix("  new") || $0.hasSuffix("exists (lounge)") }.count == 8)
            #expect(!result.standardOutput.contains("cellar") && !result.standardOutput.contains("bridge/state"))

            let json = try await hubctl.run("discover", "--seconds", "0", "--json")
            #expect(json.status == 0, "\(json.standardError)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
            let devices = try #require(object["devices"] as? [[String: Any]])
            #expect(devices.count == 8)
            let shed = try #require(devices.first { $0["device"] as? String == "garden/shed door" })
            #expect(shed["sensor"] as? String == "garden shed door" && shed["registry"] as? String == "new")
            #expect(shed["map"] as? String == "true=closed,false=open" && shed["valuePath"] as? String == "contact")
            #expect(shed["model"] as? String == "MCCGQ11LM" && shed["silenceTimeout"] as? Double == 90_000)
            #expect(
                shed["command"] as? String
                    == "hubctl sensors add 'garden shed door' --preset zigbee2mqtt --device 'garden/shed door' --value contact"
            )
            let existing = try #require(devices.first { $0["registry"] as? String == "exists" })
            #expect(existing["existingSensor"] as? String == "lounge")
        }
    }

    @Test func addAddsTheNewOnesOnceWithThePresetsSetup() async throws {
        try await withBroker { broker in
            let hubctl = try await devices(on: broker)
            let added = try await hubctl.run("discover", "--seconds", "0", "--add")
            #expect(added.status == 0, "\(added.standardError)")
            #expect(added.standardOutput.contains("Added 'garden shed door' on topic 'zigbee2mqtt/garden/shed door'"))
            let registry = try DefaultsStore(directory: hubctl.state.path).read()
            #expect(registry.sensors.count == 8)
            let door = try #require(registry.sensor(named: "garden shed door"))
            // What the printed command makes, in a registry of its own, is the same sensor.
            let byHand = try Hubctl()
            let command = try await byHand.run(
                "sensors", "add", "garden shed door", "--preset", "zigbee2mqtt", "--device", "garden/shed door",
                "--value",
                "contact")
            #expect(command.status == 0, "\(command.standardError)")
            let twin = try #require(
                try DefaultsStore(directory: byHand.state.path).read().sensor(named: "garden shed door"))
            #expect(twin.topic == door.topic && twin.format == door.format && twin.kind == door.kind)
            #expect(twin.availability == door.availability && twin.silenceTimeout == door.silenceTimeout)
            let shelly = try #require(registry.sensor(onTopic: F.shellyTemperatureTopic))
            #expect(shelly.name == "shellyplusht-b8d61a8b17cc temperature" && shelly.format.path?.description == "tC")
            #expect(registry.sensor(onTopic: F.tasmotaSensorTopic)?.format.path?.description == "AM2301.Temperature")
            #expect(registry.sensor(onTopic: F.esphomeDoorTopic)?.name == "livingroom balcony_door")

            let again = try await hubctl.run("discover", "--seconds", "0", "--add")
            #expect(again.status == 0, "\(again.standardError)")
            #expect(again.standardOutput.contains("Nothing to add"))
            #expect(try DefaultsStore(directory: hubctl.state.path).read().sensors.count == 8)
        }
    }

    @Test func saysWhenNothingIsHeardOrTheBrokerCantBeReached() async throws {
        try await withBroker { broker in
            let hubctl = try await devices(on: broker)
            let none = try await hubctl.run(
                "discover", "--seconds", "0", "--base", "home/zigbee", "--family", "zigbee2mqtt")
            #expect(none.status == 66)
            #expect(
                none.standardError
                    == "hubctl: no devices heard in the broker's retained messages on home/zigbee/bridge/devices,"
                    + " home/zigbee/+; is the base topic right? (--base: Zigbee2MQTT's mqtt.base_topic)\n")
            let briefly = try await hubctl.run(
                "discover", "--seconds", "0.2", "--family", "shelly", "--base", "x", "--json")
            #expect(
                briefly.status == 0
                    && briefly.standardOutput.contains("\"sensor\": \"shellyplusht-b8d61a8b17cc temperature\""))
            // It says that it listens, and how long, before the wait (issue 52), on standard error: the JSON is clean.
            #expect(briefly.standardError.contains("listening for devices on the broker for 0.2 s"))
            #expect(briefly.standardOutput.hasPrefix("{"))
            let bad = try await hubctl.run("discover", "--family", "zwave")
            #expect(bad.status == 64 && bad.standardError.contains("--family 'zwave' is not a family the hub knows"))
        }
        let hubctl = try Hubctl()
        let port = try freeLoopbackPort()
        _ = try await hubctl.run("broker", "set", "--host", "127.0.0.1", "--port", "\(port)")
        let down = try await hubctl.run("discover", "--seconds", "0")
        #expect(down.status == 69)
        #expect(down.standardError == "hubctl: cannot connect to the broker at 127.0.0.1:\(port): Connection refused\n")
        let help = try await hubctl.run("discover", "--help")
        #expect(help.standardOutput.contains("hubctl discover --base home/zigbee --seconds 30"))
        #expect(help.standardOutput.contains("One sensor per device topic"))
    }
}
