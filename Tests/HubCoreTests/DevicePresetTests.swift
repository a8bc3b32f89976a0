import HubCore
import Testing

/// What each family's preset fills in from a device's name: topic, value, map, unit, availability, silence.
@Suite struct DevicePresetTests {
    @Test func zigbee2mqttNeedsAValueAndTakesTheKnownFieldsMeaning() throws {
        let door = try DeviceFamily.zigbee2mqtt.setup(device: "garden/shed door", value: try ValuePath("contact"))
        #expect(door.topic == "zigbee2mqtt/garden/shed door")
        #expect(door.availability == "zigbee2mqtt/garden/shed door/availability")
        #expect(door.kind == .status && door.format.map?.description == "true=closed,false=open")
        #expect(door.silenceTimeout == .seconds(25 * 3600))
        let mains = try DeviceFamily.zigbee2mqtt.setup(
            device: "plug", base: "z2m/", value: try ValuePath("power"), batteryPowered: false)
        #expect(mains.topic == "z2m/plug" && mains.silenceTimeout == .seconds(600))
        #expect(mains.kind == .numeric && mains.format.unit == "W")
        #expect(throws: DevicePresetError.self) { try DeviceFamily.zigbee2mqtt.setup(device: "door") }
    }

    @Test func tasmotaFollowsTheFirstTemperatureOrItsZigbeeContact() throws {
        let climate = try DeviceFamily.tasmota.setup(device: "tasmota_5A1B2C")
        #expect(climate.topic == "tele/tasmota_5A1B2C/SENSOR" && climate.availability == "tele/tasmota_5A1B2C/LWT")
        #expect(climate.format.path?.description == "*.Temperature" && climate.format.unit == "°C")
        #expect(climate.silenceTimeout == .seconds(900))
        let contact = try DeviceFamily.tasmota.setup(device: "zb", value: try ValuePath("ZbReceived.*.Contact"))
        #expect(contact.format.map?.description == "0=closed,1=open")
        #expect(contact.silenceTimeout == .seconds(25 * 3600))
        // SetOption89: the device's own topic under the bridge's; the last will is still the bridge's.
        let own = try DeviceFamily.tasmota.setup(device: "zbbridge/662E", value: try ValuePath("ZbReceived.*.Contact"))
        #expect(own.topic == "tele/zbbridge/662E/SENSOR" && own.availability == "tele/zbbridge/LWT")
        let decoded = try contact.format.decode(
            #"{"ZbReceived":{"0x662E":{"Device":"0x662E","Contact":1}}}"#, numeric: false
        ).get()
        #expect(decoded.status == "open")
    }

    @Test func esphomeNamesNodeComponentAndObject() throws {
        let temperature = try DeviceFamily.esphome.setup(device: "livingroom/living_room_temperature")
        #expect(temperature.topic == "livingroom/sensor/living_room_temperature/state")
        #expect(temperature.availability == "livingroom/status" && temperature.kind == .numeric)
        #expect(temperature.format.unit == "°C" && temperature.format.path == nil)
        let door = try DeviceFamily.esphome.setup(device: "balcony/binary_sensor/door")
        #expect(door.kind == .status && door.format.map?.description == "ON=open,OFF=closed")
        let button = try DeviceFamily.esphome.setup(device: "hall/binary_sensor/button")
        #expect(button.format.map?.description == "ON=on,OFF=off")
        // ON is open for ESPHome's contact too (Home Assistant's meaning), not Zigbee2MQTT's true = closed.
        let contact = try DeviceFamily.esphome.setup(device: "hall/binary_sensor/front_contact")
        #expect(contact.format.map?.description == "ON=open,OFF=closed")
        let leak = try DeviceFamily.esphome.setup(device: "cellar/binary_sensor/water_leak")
        #expect(leak.format.map?.description == "ON=leak,OFF=dry")
        let volts = try DeviceFamily.esphome.setup(device: "node/sensor/battery_voltage")
        #expect(volts.format.unit == "V")
        #expect(throws: DevicePresetError.self) { try DeviceFamily.esphome.setup(device: "a/b/c/d") }
    }

    @Test func shellyKnowsItsComponentsFields() throws {
        let temperature = try DeviceFamily.shelly.setup(device: "shellyplusht-08b61f/temperature:0")
        #expect(temperature.topic == "shellyplusht-08b61f/status/temperature:0")
        #expect(temperature.availability == "shellyplusht-08b61f/online")
        #expect(temperature.format.path?.description == "tC" && temperature.format.unit == "°C")
        let relay = try DeviceFamily.shelly.setup(device: "shellyplus1pm-a8032a/switch:0")
        #expect(relay.format.path?.description == "output" && relay.format.map?.description == "true=on,false=off")
        let battery = try DeviceFamily.shelly.setup(device: "shellyplusht-08b61f/devicepower:0")
        #expect(battery.format.path?.description == "battery.percent" && battery.format.unit == "%")
        #expect(throws: DevicePresetError.self) { try DeviceFamily.shelly.setup(device: "shellyplus1pm-a8032a") }
        #expect(throws: DevicePresetError.self) { try DeviceFamily.shelly.setup(device: "x/cover:0") }
    }

    /// Shelly Gen1 (its MQTT API): a plain value on `shellies/<id>/…`, `shellies/<id>/online` true or false.
    @Test func shellyGen1HasAPresetToo() throws {
        let temperature = try DeviceFamily.shelly.setup(device: "shellyht-C5F0A1/sensor/temperature")
        #expect(temperature.topic == "shellies/shellyht-C5F0A1/sensor/temperature")
        #expect(temperature.availability == "shellies/shellyht-C5F0A1/online")
        #expect(temperature.kind == .numeric && temperature.format.unit == "°C" && temperature.format.path == nil)
        #expect(temperature.silenceTimeout == DeviceFamily.batterySilence)
        // The same with the prefix written out.
        #expect(try DeviceFamily.shelly.setup(device: "shellies/shellyht-C5F0A1/sensor/temperature") == temperature)
        let door = try DeviceFamily.shelly.setup(device: "shellydw2-A1B2C3/sensor/state")
        #expect(door.kind == .status && door.format.map?.description == "open=open,close=closed")
        #expect(try door.format.decode("close", numeric: false).get().status == "closed")
        let flood = try DeviceFamily.shelly.setup(device: "shellyflood-D4E5F6/sensor/flood")
        #expect(try flood.format.decode("true", numeric: false).get().status == "leak")
        let relay = try DeviceFamily.shelly.setup(device: "shelly1-ABCDEF/relay/0")
        #expect(relay.kind == .status)
        #expect(try relay.format.decode("on", numeric: false).get().status == "on")
        #expect(relay.silenceTimeout == nil)
        let power = try DeviceFamily.shelly.setup(device: "shelly1pm-ABCDEF/relay/0/power")
        #expect(power.kind == .numeric && power.format.unit == "W")
        // Shelly Gas says none, mild or heavy: a status as it is, not a binary gas sensor; on mains power.
        let gas = try DeviceFamily.shelly.setup(device: "shellygas-ABCDEF/sensor/gas")
        #expect(gas.kind == .status && gas.format.map == nil && gas.silenceTimeout == nil)
        #expect(try gas.format.decode("mild", numeric: false).get().status == "mild")
        let input = try DeviceFamily.shelly.setup(device: "shellyi3-ABCDEF/input/1")
        #expect(try input.format.decode("1", numeric: false).get().status == "on")
        for device in ["shellyht-C5F0A1/sensor/error", "shelly1-ABCDEF/relay/x", "shelly1-ABCDEF/relay/0/energy"] {
            let error = #expect(throws: DevicePresetError.self) { try DeviceFamily.shelly.setup(device: device) }
            #expect(error?.description.contains("Gen1") == true, "\(device): \(String(describing: error))")
        }
    }
}
