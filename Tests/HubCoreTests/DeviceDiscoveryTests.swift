import Foundation
import HubCore
import HubTestKit
import Testing

/// Discovery on each family's documented payloads (DeviceFixtures): which devices, which field, which name, and the
/// same setup a `--preset` add makes; junk is no device.
@Suite struct DeviceDiscoveryTests {
    typealias F = DeviceFixtures

    /// Every message in turn; the devices they revealed.
    func discover(
        _ messages: [(String, String)], families: [DeviceFamily] = DeviceFamily.all, retained: Bool = false
    ) -> (discovery: DeviceDiscovery, revealed: [DiscoveredDevice]) {
        var discovery = DeviceDiscovery(families: families)
        var revealed: [DiscoveredDevice] = []
        for (topic, payload) in messages {
            revealed += discovery.take(topic: topic, payload: Array(payload.utf8), retained: retained)
        }
        return (discovery, revealed)
    }

    /// What `hubctl sensors add --preset` makes of the device's arguments.
    func presetSetup(_ device: DiscoveredDevice) throws -> DeviceFamily.Setup {
        try device.family.setup(
            device: device.device, base: device.base, value: device.setup.format.path,
            batteryPowered: device.batteryPowered)
    }

    @Test func zigbee2MQTTsDeviceListGivesOneSensorPerDeviceOnItsPrimaryField() throws {
        let (discovery, revealed) = discover([(F.zigbee2mqttBridgeDevicesTopic, F.zigbee2mqttBridgeDevices)])
        #expect(revealed.map(\.name) == ["garden shed door", "hallway_motion", "living_room_climate", "kitchen_leak"])
        #expect(
            revealed.map { $0.setup.format.path?.description } == ["contact", "occupancy", "temperature", "water_leak"])
        #expect(discovery.skipped.isEmpty, "the coordinator is no device to follow, nor to mention")
        let door = revealed[0]
        #expect(door.device == "garden/shed door" && door.family == .zigbee2mqtt)
        #expect(door.nameNote?.contains("'/' became a space") == true)
        #expect(door.setup.topic == "zigbee2mqtt/garden/shed door")
        #expect(door.setup.availability == "zigbee2mqtt/garden/shed door/availability")
        #expect(door.setup.format.map?.description == "true=closed,false=open")
        #expect(door.setup.silenceTimeout == DeviceFamily.batterySilence)
        #expect(door.model == "MCCGQ11LM" && door.vendor == "Aqara" && door.address == "0x00158d0004a1b2c3")
        #expect(door.reason.contains("'contact' is a binary sensor (door)"))
        #expect(
            door.presetArguments == ["--preset", "zigbee2mqtt", "--device", "garden/shed door", "--value", "contact"])
        let climate = revealed[2]
        #expect(climate.setup.kind == .numeric && climate.setup.format.unit == "°C")
        #expect(climate.reason.contains("humidity, pressure stay attributes"), "\(climate.reason)")
        for device in revealed { #expect(try presetSetup(device) == device.setup) }
    }

    @Test func aMainsPoweredDisabledUnsupportedOrFieldlessDeviceIsSaidSo() throws {
        let exposes = #"[{"access":1,"property":"temperature","type":"numeric","unit":"°C"}]"#
        let list = """
            [{"friendly_name":"plug","ieee_address":"0x1","type":"Router","power_source":"Mains (single phase)",\
            "supported":true,"disabled":false,"definition":{"model":"P1","vendor":"V","description":"Plug","exposes":\(exposes)}},
            {"friendly_name":"off","type":"EndDevice","disabled":true,"supported":true,"definition":{"exposes":\(exposes)}},
            {"friendly_name":"odd","type":"EndDevice","supported":false},
            {"friendly_name":"button","type":"EndDevice","supported":true,"definition":{"exposes":[\(F.zigbee2mqttEnumExpose)]}}]
            """
        let (discovery, revealed) = discover([("zigbee2mqtt/bridge/devices", list)])
        let plug = try #require(revealed.first)
        #expect(revealed.count == 1)
        #expect(plug.batteryPowered == false && plug.setup.silenceTimeout == DeviceFamily.mainsSilence)
        #expect(plug.presetArguments.contains("--mains-powered"))
        #expect(try presetSetup(plug) == plug.setup)
        #expect(discovery.skipped.map(\.device) == ["zigbee2mqtt/off", "zigbee2mqtt/odd", "zigbee2mqtt/button"])
        #expect(discovery.skipped[0].reason == "disabled in Zigbee2MQTT")
        #expect(discovery.skipped[2].reason.hasPrefix("none of its fields is one a sensor follows"))
    }

    @Test func zigbee2MQTTStateTopicsAreAFallbackTheDeviceListReplaces() throws {
        var (discovery, revealed) = discover([
            (F.zigbee2mqttMotionTopic, F.zigbee2mqttMotionState), ("zigbee2mqtt/some group", #"{"temperature":20}"#),
            (F.zigbee2mqttBridgeStateTopic, F.zigbee2mqttBridgeStateOnline),
        ])
        #expect(revealed.map(\.name) == ["hallway_motion", "some group"])
        #expect(revealed[0].reason.contains("no bridge/devices list was heard"))
        #expect(revealed[0].value == "occupied")
        let new = discovery.take(
            topic: F.zigbee2mqttBridgeDevicesTopic, payload: Array(F.zigbee2mqttBridgeDevices.utf8), retained: true)
        // The motion sensor was known: not new again, but now with the list's facts; the group the list does not
        // name is gone.
        #expect(new.map(\.name) == ["garden shed door", "living_room_climate", "kitchen_leak"])
        #expect(
            discovery.devices.map(\.name) == [
                "hallway_motion", "garden shed door", "living_room_climate", "kitchen_leak",
            ])
        #expect(discovery.devices[0].model == "RTCGQ11LM" && discovery.devices[0].value == "occupied")
        // Once the list is heard, a state topic it does not name is no device.
        #expect(
            discovery.take(topic: "zigbee2mqtt/stranger", payload: Array(#"{"contact":true}"#.utf8), retained: false)
                .isEmpty)
        revealed = discovery.take(
            topic: F.zigbee2mqttClimateTopic, payload: Array(F.zigbee2mqttClimateState.utf8), retained: true)
        #expect(revealed.isEmpty)
        #expect(discovery.devices[2].value == "21.34 °C" && discovery.devices[2].retained)
    }

    @Test func tasmotaFollowsTheFirstKnownFieldOfItsSensorReport() throws {
        let (_, revealed) = discover([
            (F.tasmotaSensorTopic, F.tasmotaAM2301), ("tele/ds/SENSOR", F.tasmotaDS18B20),
            ("tele/two/SENSOR", F.tasmotaDS18B20Multiple), ("tele/zb/SENSOR", F.tasmotaZbReceivedClimate),
        ])
        #expect(revealed.map(\.name) == ["tasmota_A1B2C3", "ds", "two", "zb temperature"])
        #expect(
            revealed.map { $0.setup.format.path?.description }
                == ["AM2301.Temperature", "DS18B20.Temperature", "DS18B20-1.Temperature", "ZbReceived.*.Temperature"])
        #expect(revealed[0].setup.topic == "tele/tasmota_A1B2C3/SENSOR" && revealed[0].value == "22.6 °C")
        #expect(revealed[0].setup.availability == "tele/tasmota_A1B2C3/LWT")
        #expect(revealed[0].reason.contains("Humidity stays an attribute"), "\(revealed[0].reason)")
        #expect(revealed[3].setup.silenceTimeout == DeviceFamily.batterySilence)
        for device in revealed { #expect(try presetSetup(device) == device.setup) }
    }

    /// Zigbee2Tasmota's Contact is the IAS zone alarm bit: 0 closed, 1 open.
    @Test func aZigbee2TasmotaContactReadsZeroAsClosedAndOneAsOpen() throws {
        var (discovery, revealed) = discover([(F.tasmotaSensorTopic, F.tasmotaZbReceivedContactClosed)])
        let door = try #require(revealed.first)
        #expect(door.name == "tasmota_A1B2C3 contact" && door.setup.format.path?.description == "ZbReceived.*.Contact")
        #expect(door.setup.format.map?.description == "0=closed,1=open")
        #expect(door.reason.contains("SetOption89"))
        #expect(discovery.devices[0].value == "closed")
        _ = discovery.take(
            topic: F.tasmotaSensorTopic, payload: Array(F.tasmotaZbReceivedContactOpen.utf8), retained: false)
        #expect(discovery.devices[0].value == "open")
        #expect(try presetSetup(door) == door.setup)
        // SetOption89: a topic per device.
        revealed = discover([(F.tasmotaZbSensorTopicPerDevice, F.tasmotaZbReceivedByName)]).revealed
        #expect(revealed.map(\.device) == ["tasmota_A1B2C3/662E"])
        #expect(revealed.first?.setup.topic == F.tasmotaZbSensorTopicPerDevice)
    }

    @Test func esphomeGivesASensorPerEntity() throws {
        let (discovery, revealed) = discover([
            (F.esphomeTemperatureTopic, F.esphomeTemperature), (F.esphomeDoorTopic, F.esphomeBinaryOn),
            (F.esphomeHumidityTopic, F.esphomeSensorNaN), ("livingroom/sensor/junk/state", "hello"),
            ("livingroom/binary_sensor/junk/state", "maybe"), (F.esphomeStatusTopic, F.esphomeStatusOnline),
        ])
        #expect(revealed.map(\.name) == ["living_room_temperature", "livingroom balcony_door", "living_room_humidity"])
        #expect(revealed.map(\.device)[1] == "livingroom/binary_sensor/balcony_door")
        #expect(revealed[0].setup.kind == .numeric && revealed[0].setup.format.unit == "°C")
        #expect(revealed[0].setup.availability == F.esphomeStatusTopic)
        #expect(discovery.devices.map(\.value) == ["22.5 °C", "open", nil])
        #expect(
            revealed[1].presetArguments == ["--preset", "esphome", "--device", "livingroom/binary_sensor/balcony_door"])
        for device in revealed { #expect(try presetSetup(device) == device.setup) }
    }

    @Test func shellyGivesASensorPerMeasuringComponent() throws {
        let (discovery, revealed) = discover([
            (F.shellyTemperatureTopic, F.shellyTemperature), (F.shellyHumidityTopic, F.shellyHumidity),
            (F.shellyDevicePowerTopic, F.shellyDevicePower), (F.shellySwitchTopic, F.shellySwitchOn),
            ("shellyplusht-b8d61a8b17cc/status/temperature:1", F.shellyTemperature),
            ("shellyplusht-b8d61a8b17cc/status/sys", #"{"mac":"B8D61A8B17CC"}"#),
            ("shellyplusht-b8d61a8b17cc/status/wifi:0", #"{"id":0,"rssi":-60}"#),
            (F.shellyEventsTopic, F.shellyNotifyStatus),
        ])
        #expect(
            revealed.map(\.name) == [
                "shellyplusht-b8d61a8b17cc temperature", "shellyplusht-b8d61a8b17cc humidity",
                "shellyplus1pm-a8032ab12345 switch",
            ])
        #expect(revealed.map { $0.setup.format.path?.description } == ["tC", "rh", "output"])
        #expect(discovery.devices.map(\.value) == ["19.8 °C", "54.2%", "on"])
        #expect(revealed[2].setup.availability == F.shellyOnlineTopic)
        for device in revealed { #expect(try presetSetup(device) == device.setup) }
    }

    /// Shelly Gen1 devices, as their MQTT API publishes: an H&T, a Door/Window 2, a Shelly 1PM.
    @Test func shellyGen1GivesASensorPerValueItKnows() throws {
        let (discovery, revealed) = discover([
            ("shellies/shellyht-C5F0A1/online", "true"),
            ("shellies/shellyht-C5F0A1/sensor/temperature", "21.75"),
            ("shellies/shellyht-C5F0A1/sensor/humidity", "48.5"),
            ("shellies/shellyht-C5F0A1/sensor/error", "0"),
            ("shellies/shellydw2-A1B2C3/sensor/state", "open"),
            ("shellies/shellydw2-A1B2C3/sensor/illumination", "dark"),
            ("shellies/shelly1pm-ABCDEF/relay/0", "on"),
            ("shellies/shelly1pm-ABCDEF/relay/0/power", "12.5"),
            ("shellies/shelly1pm-ABCDEF/relay/0/energy", "1000"),
            ("shellies/shelly1pm-ABCDEF/relay/1", "maybe"),
            ("shellies/shelly1pm-ABCDEF/announce", #"{"id":"shelly1pm-ABCDEF"}"#),
        ])
        #expect(
            revealed.map(\.name) == [
                "shellyht-C5F0A1 temperature", "shellyht-C5F0A1 humidity", "shellydw2-A1B2C3 door",
                "shelly1pm-ABCDEF relay", "shelly1pm-ABCDEF power",
            ])
        #expect(discovery.devices.map(\.value) == ["21.75 °C", "48.5%", "open", "on", "12.5 W"])
        #expect(revealed.allSatisfy { $0.family == .shelly && $0.setup.availability?.hasSuffix("/online") == true })
        #expect(revealed[2].presetArguments == ["--preset", "shelly", "--device", "shellydw2-A1B2C3/sensor/state"])
        for device in revealed { #expect(try presetSetup(device) == device.setup) }
        #expect(DeviceDiscovery(families: [.shelly]).listens(to: "shellies/shellyht-C5F0A1/sensor/temperature"))
    }

    @Test func junkIsNoDevice() {
        let messages = [
            ("kitchen", "open"), ("home/cellar", #"{"temperature":20}"#), (F.zigbee2mqttBridgeStateTopic, "{}"),
            ("zigbee2mqtt/bridge/logging", #"{"level":"info"}"#), (F.zigbee2mqttContactAvailabilityTopic, "online"),
            (F.zigbee2mqttBridgeDevicesTopic, #"{"not":"a list"}"#), (F.zigbee2mqttBridgeDevicesTopic, "[garbage"),
            ("zigbee2mqtt/button", F.zigbee2mqttButtonAction), ("zigbee2mqtt/door", "not json"),
            ("zigbee2mqtt/door", #"{"contact":"yes"}"#), ("zigbee2mqtt/door", ""), (F.tasmotaLWTTopic, "Online"),
            (F.tasmotaPowerTopic, "ON"), ("tele/x/SENSOR", #"{"Time":"2024-05-01T10:00:00"}"#), ("tele//SENSOR", "{}"),
            ("tele/a/b/c/SENSOR", F.tasmotaAM2301), ("node/switch/relay/state", "ON"), ("node/sensor/x/state", ""),
            ("p/status/temperature:0", #"{"id":1,"tC":20}"#), ("p/status/temperature:x", #"{"id":0,"tC":20}"#),
            ("p/status/temperature:0", #"{"id":0}"#), ("p/status/Temperature:0", #"{"id":0,"tC":20}"#),
            ("p/status/temperature:0", "[1]"), ("$SYS/broker/uptime", "10"),
        ]
        let (discovery, revealed) = discover(messages)
        #expect(revealed.isEmpty, "\(revealed.map(\.setup.topic))")
        #expect(discovery.devices.isEmpty)
        #expect(!discovery.listens(to: "kitchen") && discovery.listens(to: "tele/x/SENSOR"))
        // A family left out is not read.
        #expect(discover([(F.tasmotaSensorTopic, F.tasmotaAM2301)], families: [.esphome]).revealed.isEmpty)
    }

    @Test func filtersAreEachFamilysOwnAndBridgeListsComeFirst() {
        let discovery = DeviceDiscovery(zigbee2mqttBases: ["zigbee2mqtt", "/z2m/second/"])
        #expect(
            discovery.filters == [
                "zigbee2mqtt/bridge/devices", "z2m/second/bridge/devices", "zigbee2mqtt/+", "z2m/second/+",
                "tele/+/SENSOR", "tele/+/+/SENSOR", "+/sensor/+/state", "+/binary_sensor/+/state", "+/status/+",
                "shellies/+/sensor/+", "shellies/+/relay/+", "shellies/+/relay/+/power", "shellies/+/input/+",
            ])
        #expect(DeviceDiscovery(families: [.shelly]).filters.first == "+/status/+")
        var second = discovery
        let found = second.take(
            topic: "z2m/second/bridge/devices", payload: Array(F.zigbee2mqttBridgeDevices.utf8), retained: true)
        #expect(found.first?.setup.topic == "z2m/second/garden/shed door")
        #expect(found.first?.presetArguments.contains("z2m/second") == true)
    }

    @Test func aFloodOfTopicsStopsAtTheMaximum() {
        var discovery = DeviceDiscovery(families: [.esphome])
        for index in 0...DeviceDiscovery.maximumDevices {
            _ = discovery.take(topic: "n\(index)/sensor/t/state", payload: Array("1".utf8), retained: false)
        }
        #expect(discovery.devices.count == DeviceDiscovery.maximumDevices)
    }

    @Test func addingANameAnotherSensorHasNumbersIt() throws {
        var document = DefaultsDocument()
        try document.addSensor(named: "garden shed door", topic: "elsewhere")
        let door = try #require(
            discover([(F.zigbee2mqttBridgeDevicesTopic, F.zigbee2mqttBridgeDevices)]).revealed.first)
        let sensor = try document.addDiscovered(door)
        #expect(sensor.name == "garden shed door 2" && sensor.topic == door.setup.topic)
        #expect(sensor.format == door.setup.format && sensor.availability == door.setup.availability)
        #expect(sensor.silenceTimeout == door.setup.silenceTimeout && sensor.kind == .status)
        #expect(throws: RegistryError.self) { try document.addDiscovered(door) }
    }

    @Test func aNameIsMadeFitForASensor() throws {
        let (_, revealed) = discover([
            (
                "zigbee2mqtt/bridge/devices",
                #"[{"friendly_name":"a:b+c","ieee_address":"0x00158d0001","type":"EndDevice","power_source":"Battery","definition":{"exposes":[{"access":1,"property":"contact","type":"binary"}]}},{"friendly_name":"::","ieee_address":"0x00158d0002","type":"EndDevice","definition":{"exposes":[{"access":1,"property":"smoke","type":"binary"}]}}]"#
            )
        ])
        #expect(revealed.map(\.name) == ["0x00158d0002"], "a '+' makes no topic")
        let named = discover([
            (
                "zigbee2mqtt/bridge/devices",
                #"[{"friendly_name":"a:b c/d","type":"EndDevice","definition":{"exposes":[{"access":1,"property":"contact","type":"binary"}]}}]"#
            )
        ]).revealed
        #expect(named.map(\.name) == ["a b c d"])
        #expect(named.first?.nameNote == "':', '/' became a space: a sensor name can't hold them")
    }
}
