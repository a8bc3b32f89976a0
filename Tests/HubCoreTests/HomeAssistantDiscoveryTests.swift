import Foundation
import HubCore
import Testing

/// What a sensor becomes in Home Assistant, built with no broker: components, device classes, ids in topics and
/// names only in `name`, the uniform state.
@Suite struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(
        prefix: "homeassistant", hubAvailability: "sensorhub/availability", hubID: "sensor hub/1", version: "1.0",
        defaultSilence: .seconds(600))
    let time = Timestamp(millisecondsSince1970: 1_795_341_780_000)

    func object(_ message: HomeAssistantDiscovery.Message) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    func registry() throws -> DefaultsDocument {
        var document = DefaultsDocument()
        let door = try DeviceFamily.zigbee2mqtt.setup(device: "front door", value: try ValuePath("contact"))
        try document.addSensor(
            named: "Tür vorn", topic: door.topic, kind: door.kind, silenceTimeout: door.silenceTimeout,
            format: door.format,
            availability: door.availability,
            at: time)
        try document.addSensor(
            named: "cellar", topic: "home/cellar", kind: .numeric,
            format: ValueFormat(path: try ValuePath("AM2301.Humidity"), unit: "%"), at: time)
        try document.addSensor(named: "kitchen", at: time)
        try document.addSensor(named: "air", topic: "sensorhub/sds011/a160/state", kind: .particulate, at: time)
        return document
    }

    /// A plain value (ESPHome's, Shelly Gen1's) gets the device class its topic names, as a JSON field's does.
    @Test func plainValuesGetTheirDeviceClassFromTheirTopic() throws {
        var document = DefaultsDocument()
        let cases: [(DeviceFamily, String, String, String)] = [
            (.esphome, "livingroom/sensor/living_room_temperature", "sensor", "temperature"),
            (.esphome, "livingroom/binary_sensor/balcony_door", "binary_sensor", "door"),
            (.shelly, "shellyht-C5F0A1/sensor/humidity", "sensor", "humidity"),
            (.shelly, "shellydw2-A1B2C3/sensor/state", "binary_sensor", "door"),
            (.shelly, "shellyflood-D4E5F6/sensor/flood", "binary_sensor", "moisture"),
        ]
        for (index, (family, device, component, deviceClass)) in cases.enumerated() {
            let setup = try family.setup(device: device)
            try document.addSensor(
                named: "s\(index)", topic: setup.topic, kind: setup.kind, silenceTimeout: setup.silenceTimeout,
                format: setup.format, availability: setup.availability, at: time)
            let sensor = try #require(document.sensor(named: "s\(index)"))
            let configs = discovery.configs(for: sensor)
            #expect(configs.map(\.topic) == ["homeassistant/\(component)/sensorhub/\(sensor.id)/config"], "\(device)")
            let config = try object(configs[0])
            #expect(config["device_class"] as? String == deviceClass, "\(device): \(config)")
            if deviceClass == "door" {
                #expect(config["payload_on"] as? String == "open" && config["payload_off"] as? String == "closed")
            }
        }
    }

    @Test func eachKindBecomesTheEntitiesItShould() throws {
        let document = try registry()
        let door = try #require(document.sensor(named: "Tür vorn"))
        let configs = discovery.configs(for: door)
        #expect(configs.map(\.topic) == ["homeassistant/binary_sensor/sensorhub/\(door.id)/config"])
        let config = try object(configs[0])
        #expect(config["device_class"] as? String == "door")
        #expect(config["payload_on"] as? String == "open" && config["payload_off"] as? String == "closed")
        #expect(config["name"] is NSNull && config["expire_after"] as? Int == 90_000)
        let device = try #require(config["device"] as? [String: Any])
        #expect(
            device["name"] as? String == "Tür vorn" && device["via_device"] as? String == "sensorhub_hub_sensor_hub_1")
        let availability = try #require(config["availability"] as? [[String: Any]])
        #expect(
            availability.map { $0["topic"] as? String } == [
                "sensorhub/availability", "sensorhub/sensor/\(door.id)/availability",
            ])

        let cellar = try #require(document.sensor(named: "cellar"))
        let humidity = try object(discovery.configs(for: cellar)[0])
        #expect(humidity["device_class"] as? String == "humidity" && humidity["unit_of_measurement"] as? String == "%")
        #expect(humidity["state_class"] as? String == "measurement" && humidity["expire_after"] as? Int == 600)

        let kitchen = try #require(document.sensor(named: "kitchen"))
        let text = try object(discovery.configs(for: kitchen)[0])
        #expect(discovery.configs(for: kitchen)[0].topic.contains("/sensor/sensorhub/"))
        #expect(text["device_class"] == nil && text["value_template"] as? String == "{{ value_json.status }}")

        let air = try #require(document.sensor(named: "air"))
        #expect(
            discovery.configs(for: air).map(\.topic) == [
                "homeassistant/sensor/sensorhub/\(air.id)_pm25/config",
                "homeassistant/sensor/sensorhub/\(air.id)_pm10/config",
                "homeassistant/binary_sensor/sensorhub/\(air.id)_air/config",
            ])
        // Every config topic a sensor may have had is among those `ha clear` empties.
        for sensor in document.sensors {
            #expect(
                Set(discovery.configs(for: sensor).map(\.topic)).isSubset(of: discovery.allConfigTopics(for: sensor)))
        }
        #expect(discovery.hubConfig.topic == "homeassistant/binary_sensor/sensorhub/sensor_hub_1/config")
    }

    @Test func theStateIsOneShapeAndARenameChangesOnlyTheName() throws {
        var document = try registry()
        var door = try #require(document.sensor(named: "Tür vorn"))
        document.recordStatus(
            "open", lastUpdated: time, onTopic: door.topic,
            attributes: SensorAttributes([.init(name: "battery", value: .number(97))]))
        door = try #require(document.sensor(named: "Tür vorn"))
        let state = try #require(
            try JSONSerialization.jsonObject(with: Data(HomeAssistantDiscovery.state(of: door))) as? [String: Any])
        #expect(
            state["status"] as? String == "open" && state["value"] is NSNull && state["kind"] as? String == "status")
        #expect((state["attributes"] as? [String: Any])?["battery"] as? Int == 97 && state["id"] as? String == door.id)
        let before = discovery.configs(for: door)
        try document.renameSensor("Tür vorn", to: "porch")
        let after = discovery.configs(for: try #require(document.sensor(named: "porch")))
        #expect(before.map(\.topic) == after.map(\.topic))
        #expect(try object(before[0])["unique_id"] as? String == object(after[0])["unique_id"] as? String)
        #expect((try object(after[0])["device"] as? [String: Any])?["name"] as? String == "porch")
        #expect(HomeAssistantDiscovery.availability(of: door) == Array("online".utf8))
    }

    /// A numeric sensor with bands stays a numeric sensor on its value; its band (the hub's status) is an attribute.
    @Test func aBandedSensorIsNumericWithItsBandAnAttribute() throws {
        let sensor = Sensor(
            name: "uv index", topic: "sensorhub/uv/uv index", status: "High", lastUpdated: time, added: time,
            kind: .numeric, format: ValueFormat(path: try ValuePath("uvi"), unit: "UVI", decimals: 1, bands: .whoUV),
            attributes: [.init(name: "value", value: .number(6.24)), .init(name: "ozone", value: .number(324.5))])
        let configs = discovery.configs(for: sensor)
        #expect(configs.map(\.topic) == ["homeassistant/sensor/sensorhub/\(sensor.id)/config"])
        let config = try object(configs[0])
        #expect(config["value_template"] as? String == "{{ value_json.value }}")
        #expect(config["unit_of_measurement"] as? String == "UVI")
        #expect(
            config["json_attributes_template"] as? String
                == "{{ dict(value_json.attributes, band=value_json.status) | tojson }}")
        let state = try #require(
            try JSONSerialization.jsonObject(with: Data(HomeAssistantDiscovery.state(of: sensor))) as? [String: Any])
        #expect(state["value"] as? Double == 6.24 && state["status"] as? String == "High")
    }
}
