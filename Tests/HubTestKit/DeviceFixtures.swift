/// Topics and payloads as real home devices publish them over MQTT, for parser and bridge tests.
///
/// Each constant names the documentation or source it follows. Values are realistic but invented (addresses,
/// readings). Where a project has changed its format, both shapes are given and the comment says which is which.
public enum DeviceFixtures {

    // MARK: - Zigbee2MQTT

    /// Base topic (`mqtt.base_topic`, default `zigbee2mqtt`).
    /// https://www.zigbee2mqtt.io/guide/usage/mqtt_topics_and_messages.html
    public static let zigbee2mqttBaseTopic = "zigbee2mqtt"

    /// A friendly name containing `/` (Z2M allows it, except leading/trailing `/`, a trailing `/<digits>`, `#`, `+`):
    /// the topic levels cannot be split to find the device; match against `bridge/devices` names instead.
    /// Koenkk/zigbee2mqtt lib/util/utils.ts `validateFriendlyName`.
    public static let zigbee2mqttContactName = "garden/shed door"
    public static let zigbee2mqttContactTopic = "zigbee2mqtt/garden/shed door"

    /// Aqara MCCGQ11LM door/window sensor state. `contact: true` = magnet near = CLOSED; `false` = open
    /// (the expose has `value_on: false`, `value_off: true`).
    /// Koenkk/zigbee-herdsman-converters src/devices/lumi.ts (MCCGQ11LM), src/lib/exposes.ts `contact`.
    public static let zigbee2mqttContactOpen = #"{"battery":97,"contact":false,"linkquality":120,"voltage":3000}"#
    public static let zigbee2mqttContactClosed = #"{"battery":97,"contact":true,"linkquality":117,"voltage":3000}"#

    /// Aqara RTCGQ11LM motion sensor state (occupancy, illuminance in lx, battery, device temperature).
    /// Koenkk/zigbee-herdsman-converters src/devices/lumi.ts (RTCGQ11LM).
    public static let zigbee2mqttMotionTopic = "zigbee2mqtt/hallway_motion"
    public static let zigbee2mqttMotionState =
        #"{"battery":100,"device_temperature":23,"illuminance":58,"linkquality":102,"occupancy":true,"power_outage_count":12,"voltage":3035}"#

    /// Aqara WSDCGQ11LM temperature/humidity/pressure sensor state (°C, %, hPa, mV).
    /// Koenkk/zigbee-herdsman-converters src/devices/lumi.ts (WSDCGQ11LM).
    public static let zigbee2mqttClimateTopic = "zigbee2mqtt/living_room_climate"
    public static let zigbee2mqttClimateState =
        #"{"battery":91,"humidity":44.72,"linkquality":120,"pressure":1004.2,"temperature":21.34,"voltage":2985}"#

    /// Aqara SJCGQ11LM water leak sensor state (IAS zone: `water_leak`, `battery_low`).
    /// Koenkk/zigbee-herdsman-converters src/devices/lumi.ts (SJCGQ11LM), src/lib/modernExtend.ts `iasZoneAlarm`.
    public static let zigbee2mqttLeakTopic = "zigbee2mqtt/kitchen_leak"
    public static let zigbee2mqttLeakDry =
        #"{"battery":100,"battery_low":false,"device_temperature":24,"linkquality":87,"voltage":3025,"water_leak":false}"#
    public static let zigbee2mqttLeakWet =
        #"{"battery":100,"battery_low":false,"device_temperature":24,"linkquality":84,"voltage":3025,"water_leak":true}"#

    /// Per-device availability, retained, QoS 1, on `<base>/<friendly_name>/availability`.
    /// Z2M 2.x always publishes JSON (`{"state":"online"|"offline"}`); `advanced.legacy_availability_payload` was
    /// removed. Koenkk/zigbee2mqtt lib/extension/availability.ts `publishAvailability`,
    /// lib/util/settingsMigration.ts (migration to settings v2).
    public static let zigbee2mqttContactAvailabilityTopic = "zigbee2mqtt/garden/shed door/availability"
    public static let zigbee2mqttAvailabilityOnline = #"{"state":"online"}"#
    public static let zigbee2mqttAvailabilityOffline = #"{"state":"offline"}"#
    /// Z2M 1.x with `advanced.legacy_availability_payload: true` (the 1.x default): plain text.
    /// https://www.zigbee2mqtt.io/guide/configuration/device-availability.html
    public static let zigbee2mqttLegacyAvailabilityOnline = "online"
    public static let zigbee2mqttLegacyAvailabilityOffline = "offline"

    /// Bridge state, retained; also Z2M's MQTT last will (`{"state":"offline"}`). 1.x legacy: `online`/`offline`.
    /// Koenkk/zigbee2mqtt lib/mqtt.ts (`will`, `bridge/state`).
    public static let zigbee2mqttBridgeStateTopic = "zigbee2mqtt/bridge/state"
    public static let zigbee2mqttBridgeStateOnline = #"{"state":"online"}"#
    public static let zigbee2mqttBridgeStateOffline = #"{"state":"offline"}"#

    /// Join/leave events. https://www.zigbee2mqtt.io/guide/usage/mqtt_topics_and_messages.html#zigbee2mqtt-bridge-event
    public static let zigbee2mqttBridgeEventTopic = "zigbee2mqtt/bridge/event"
    public static let zigbee2mqttBridgeEventDeviceJoined =
        #"{"data":{"friendly_name":"0x00158d0004a1b2c3","ieee_address":"0x00158d0004a1b2c3"},"type":"device_joined"}"#
    public static let zigbee2mqttBridgeEventDeviceLeave =
        #"{"data":{"friendly_name":"kitchen_leak","ieee_address":"0x00158d0003c4d5e6"},"type":"device_leave"}"#

    /// Retained device list. Field names and key order (Z2M serializes with json-stable-stringify, keys sorted)
    /// follow Koenkk/zigbee2mqtt lib/extension/bridge.ts `publishDevices` / `getDefinitionPayload` and the
    /// expected payload in test/extensions/bridge.test.ts ("Should publish devices on startup"); expose objects
    /// follow Koenkk/zigbee-herdsman-converters src/lib/exposes.ts (`linkquality` is appended by Z2M,
    /// lib/model/device.ts). Notes for parsers:
    /// - the Coordinator has no `definition`, `power_source`, `model_id` (undefined keys are dropped; Z2M 1.x
    ///   sent `null`); `definition` is also absent when `supported` is false;
    /// - `access` is a bit mask: 1 = published in the state, 2 = settable (`/set`), 4 = readable (`/get`);
    /// - `interview_completed`/`interviewing` are deprecated in favour of `interview_state`;
    /// - `definition.options` and the endpoint clusters are trimmed here; real ones are longer.
    public static let zigbee2mqttBridgeDevicesTopic = "zigbee2mqtt/bridge/devices"
    public static let zigbee2mqttBridgeDevices = """
        [
        {"disabled":false,"endpoints":{"1":{"bindings":[],"clusters":{"input":[],"output":[]},"configured_reportings":[],"scenes":[]}},\
        "friendly_name":"Coordinator","ieee_address":"0x00124b0024c2d8a1","interview_completed":true,"interview_state":"SUCCESSFUL",\
        "interviewing":false,"network_address":0,"supported":true,"type":"Coordinator"},
        {"date_code":"20161129","definition":{"description":"Door and window sensor","exposes":[
        {"access":1,"category":"diagnostic","description":"Remaining battery in %, can take up to 24 hours before reported","label":"Battery","name":"battery","property":"battery","type":"numeric","unit":"%","value_max":100,"value_min":0},
        {"access":1,"description":"Indicates if the contact is closed (= true) or open (= false)","label":"Contact","name":"contact","property":"contact","type":"binary","value_off":true,"value_on":false},
        {"access":1,"category":"diagnostic","description":"Temperature of the device","label":"Device temperature","name":"device_temperature","property":"device_temperature","type":"numeric","unit":"°C"},
        {"access":1,"category":"diagnostic","description":"Voltage of the battery in millivolts","label":"Voltage","name":"voltage","property":"voltage","type":"numeric","unit":"mV"},
        {"access":1,"category":"diagnostic","description":"Link quality (signal strength)","label":"Linkquality","name":"linkquality","property":"linkquality","type":"numeric","unit":"lqi","value_max":255,"value_min":0}
        ],"model":"MCCGQ11LM","options":[],"source":"native","supports_ota":false,"vendor":"Aqara"},"disabled":false,\
        "endpoints":{"1":{"bindings":[],"clusters":{"input":["genBasic","genIdentify","genOnOff"],"output":["genBasic","genGroups","genOnOff"]},"configured_reportings":[],"scenes":[]}},\
        "friendly_name":"garden/shed door","ieee_address":"0x00158d0004a1b2c3","interview_completed":true,"interview_state":"SUCCESSFUL",\
        "interviewing":false,"manufacturer":"LUMI","model_id":"lumi.sensor_magnet.aq2","network_address":29159,"power_source":"Battery",\
        "supported":true,"type":"EndDevice"},
        {"definition":{"description":"Motion sensor","exposes":[
        {"access":1,"category":"diagnostic","description":"Remaining battery in %, can take up to 24 hours before reported","label":"Battery","name":"battery","property":"battery","type":"numeric","unit":"%","value_max":100,"value_min":0},
        {"access":1,"description":"Indicates whether the device detected occupancy","label":"Occupancy","name":"occupancy","property":"occupancy","type":"binary","value_off":false,"value_on":true},
        {"access":1,"description":"Measured illuminance","label":"Illuminance","name":"illuminance","property":"illuminance","type":"numeric","unit":"lx"},
        {"access":1,"category":"diagnostic","description":"Voltage of the battery in millivolts","label":"Voltage","name":"voltage","property":"voltage","type":"numeric","unit":"mV"},
        {"access":1,"category":"diagnostic","description":"Link quality (signal strength)","label":"Linkquality","name":"linkquality","property":"linkquality","type":"numeric","unit":"lqi","value_max":255,"value_min":0}
        ],"model":"RTCGQ11LM","options":[],"source":"native","supports_ota":false,"vendor":"Aqara"},"disabled":false,\
        "endpoints":{"1":{"bindings":[],"clusters":{"input":["genBasic","msOccupancySensing","msIlluminanceMeasurement"],"output":["genBasic","genOta"]},"configured_reportings":[],"scenes":[]}},\
        "friendly_name":"hallway_motion","ieee_address":"0x00158d0002f4e5d6","interview_completed":true,"interview_state":"SUCCESSFUL",\
        "interviewing":false,"manufacturer":"LUMI","model_id":"lumi.sensor_motion.aq2","network_address":40321,"power_source":"Battery",\
        "supported":true,"type":"EndDevice"},
        {"definition":{"description":"Temperature and humidity sensor","exposes":[
        {"access":1,"category":"diagnostic","description":"Remaining battery in %, can take up to 24 hours before reported","label":"Battery","name":"battery","property":"battery","type":"numeric","unit":"%","value_max":100,"value_min":0},
        {"access":1,"description":"Measured temperature value","label":"Temperature","name":"temperature","property":"temperature","type":"numeric","unit":"°C"},
        {"access":1,"description":"Measured relative humidity","label":"Humidity","name":"humidity","property":"humidity","type":"numeric","unit":"%"},
        {"access":1,"description":"The measured atmospheric pressure","label":"Pressure","name":"pressure","property":"pressure","type":"numeric","unit":"hPa"},
        {"access":1,"category":"diagnostic","description":"Voltage of the battery in millivolts","label":"Voltage","name":"voltage","property":"voltage","type":"numeric","unit":"mV"},
        {"access":1,"category":"diagnostic","description":"Link quality (signal strength)","label":"Linkquality","name":"linkquality","property":"linkquality","type":"numeric","unit":"lqi","value_max":255,"value_min":0}
        ],"model":"WSDCGQ11LM","options":[],"source":"native","supports_ota":false,"vendor":"Aqara"},"disabled":false,\
        "endpoints":{"1":{"bindings":[],"clusters":{"input":["genBasic","msTemperatureMeasurement","msRelativeHumidity","msPressureMeasurement"],"output":["genBasic"]},"configured_reportings":[],"scenes":[]}},\
        "friendly_name":"living_room_climate","ieee_address":"0x00158d0001e7f8a9","interview_completed":true,"interview_state":"SUCCESSFUL",\
        "interviewing":false,"manufacturer":"LUMI","model_id":"lumi.weather","network_address":51122,"power_source":"Battery",\
        "supported":true,"type":"EndDevice"},
        {"definition":{"description":"Water leak sensor","exposes":[
        {"access":1,"category":"diagnostic","description":"Remaining battery in %, can take up to 24 hours before reported","label":"Battery","name":"battery","property":"battery","type":"numeric","unit":"%","value_max":100,"value_min":0},
        {"access":1,"category":"diagnostic","description":"Voltage of the battery in millivolts","label":"Voltage","name":"voltage","property":"voltage","type":"numeric","unit":"mV"},
        {"access":1,"description":"Indicates whether the device detected a water leak","label":"Water leak","name":"water_leak","property":"water_leak","type":"binary","value_off":false,"value_on":true},
        {"access":1,"category":"diagnostic","description":"Indicates if the battery of this device is almost empty","label":"Battery low","name":"battery_low","property":"battery_low","type":"binary","value_off":false,"value_on":true},
        {"access":1,"category":"diagnostic","description":"Link quality (signal strength)","label":"Linkquality","name":"linkquality","property":"linkquality","type":"numeric","unit":"lqi","value_max":255,"value_min":0}
        ],"model":"SJCGQ11LM","options":[],"source":"native","supports_ota":false,"vendor":"Aqara"},"disabled":false,\
        "endpoints":{"1":{"bindings":[],"clusters":{"input":["genBasic","genPowerCfg","ssIasZone"],"output":["genBasic"]},"configured_reportings":[],"scenes":[]}},\
        "friendly_name":"kitchen_leak","ieee_address":"0x00158d0003c4d5e6","interview_completed":true,"interview_state":"SUCCESSFUL",\
        "interviewing":false,"manufacturer":"LUMI","model_id":"lumi.sensor_wleak.aq1","network_address":8843,"power_source":"Battery",\
        "supported":true,"type":"EndDevice"}
        ]
        """

    /// An `enum` expose (not in the list above: none of those devices has one), as the Aqara WXKG11LM button
    /// exposes its `action`. Koenkk/zigbee-herdsman-converters src/lib/exposes.ts `action`, src/devices/lumi.ts.
    public static let zigbee2mqttEnumExpose =
        #"{"access":1,"category":"diagnostic","description":"Triggered action (e.g. a button click)","label":"Action","name":"action","property":"action","type":"enum","values":["single","double","triple","quadruple","hold","release"]}"#
    /// The matching state message. https://www.zigbee2mqtt.io/guide/usage/mqtt_topics_and_messages.html
    public static let zigbee2mqttButtonAction = #"{"action":"single","battery":100,"linkquality":134,"voltage":3042}"#

    // MARK: - Tasmota

    /// Default topic is `tasmota_` + the last 6 MAC hex digits; telemetry every `TelePeriod` (300 s) on
    /// `tele/<topic>/SENSOR`, not retained unless `SensorRetain 1`. tasmota/docs docs/MQTT.md.
    public static let tasmotaTopic = "tasmota_A1B2C3"
    public static let tasmotaSensorTopic = "tele/tasmota_A1B2C3/SENSOR"

    /// AM2301 (DHT21) reading; `DewPoint` is added by every temperature+humidity driver.
    /// tasmota/docs docs/AM2301.md, docs/Sensor-API.md (`D_JSON_DEWPOINT`).
    public static let tasmotaAM2301 =
        #"{"Time":"2024-05-01T10:00:00","AM2301":{"Temperature":22.6,"Humidity":32.4,"DewPoint":5.3},"TempUnit":"C"}"#
    /// One DS18B20 (key `DS18B20`, with its 1-Wire `Id`). tasmota/docs docs/Rules.md, docs/DS18x20.md.
    public static let tasmotaDS18B20 =
        #"{"Time":"2024-05-01T10:00:00","DS18B20":{"Id":"030597946B04","Temperature":20.9},"TempUnit":"C"}"#
    /// Several DS18B20 on one device: keys become `DS18B20-1`, `DS18B20-2`, … tasmota/docs docs/DS18x20.md.
    public static let tasmotaDS18B20Multiple =
        #"{"Time":"2024-05-01T10:00:00","DS18B20-1":{"Id":"00000566CC39","Temperature":13.3},"DS18B20-2":{"Id":"0000059352D4","Temperature":1.2},"TempUnit":"C"}"#

    /// Zigbee2Tasmota: a door sensor report, keyed by short address; `Name` appears after `ZbName`.
    /// `Contact` is the IAS zone alarm bit: 0 = closed, 1 = open — the opposite sense to Z2M's `contact`.
    /// tasmota/docs docs/Zigbee.md ("Reading Sensors"), arendst/Tasmota PR #9759 (`"Contact":0` / `1`).
    public static let tasmotaZbReceivedContactClosed =
        #"{"ZbReceived":{"0x662E":{"Device":"0x662E","Name":"shed_door","Contact":0,"Endpoint":1,"LinkQuality":157}}}"#
    public static let tasmotaZbReceivedContactOpen =
        #"{"ZbReceived":{"0x662E":{"Device":"0x662E","Name":"shed_door","Contact":1,"Endpoint":1,"LinkQuality":154}}}"#
    /// With `SetOption83 1` the key is the friendly name; with `SetOption89 1` the topic gains the short address.
    /// tasmota/docs docs/Zigbee.md.
    public static let tasmotaZbReceivedByName =
        #"{"ZbReceived":{"shed_door":{"Device":"0x662E","Contact":0,"Endpoint":1,"LinkQuality":157}}}"#
    public static let tasmotaZbSensorTopicPerDevice = "tele/tasmota_A1B2C3/662E/SENSOR"
    /// A Zigbee climate sensor through Tasmota (Aqara `lumi.weather`). tasmota/docs docs/Zigbee.md.
    public static let tasmotaZbReceivedClimate =
        #"{"ZbReceived":{"0x8F20":{"Device":"0x8F20","Name":"Kitchen","Voltage":2.995,"Battery":98,"Temperature":21.01,"Humidity":53.68,"Pressure":1004.04,"PressureUnit":"hPa","Endpoint":1,"LinkQuality":88}}}"#

    /// Availability: retained `Online` on connect, `Offline` as the last will. tasmota/docs docs/MQTT.md ("LWT Topic").
    public static let tasmotaLWTTopic = "tele/tasmota_A1B2C3/LWT"
    public static let tasmotaLWTOnline = "Online"
    public static let tasmotaLWTOffline = "Offline"

    /// Relay state, always plain `ON`/`OFF`, next to `stat/<topic>/RESULT` `{"POWER":"ON"}`.
    /// tasmota/docs docs/MQTT.md.
    public static let tasmotaPowerTopic = "stat/tasmota_A1B2C3/POWER"
    public static let tasmotaPowerOn = "ON"
    public static let tasmotaPowerOff = "OFF"
    public static let tasmotaResultTopic = "stat/tasmota_A1B2C3/RESULT"
    public static let tasmotaResultPowerOn = #"{"POWER":"ON"}"#

    // MARK: - ESPHome (MQTT client component)

    /// `topic_prefix` defaults to the node name. State topics are `<prefix>/<component_type>/<object_id>/state`
    /// (object id = the entity name in snake_case), retained by default.
    /// https://esphome.io/components/mqtt.html ("MQTT Component Base Configuration").
    public static let esphomePrefix = "livingroom"
    public static let esphomeTemperatureTopic = "livingroom/sensor/living_room_temperature/state"
    /// Sensor values are plain text rounded to `accuracy_decimals`. esphome/esphome
    /// esphome/components/mqtt/mqtt_sensor.cpp `publish_state`.
    public static let esphomeTemperature = "22.5"
    public static let esphomeHumidityTopic = "livingroom/sensor/living_room_humidity/state"
    public static let esphomeHumidity = "41.2"
    /// A sensor with no valid reading publishes NaN as text (`nan`), or `None` with `publish_nan_as_none: true`.
    /// esphome/esphome esphome/components/mqtt/mqtt_sensor.cpp.
    public static let esphomeSensorNaN = "nan"
    public static let esphomeSensorNone = "None"
    /// Binary sensors publish `ON`/`OFF`. esphome/esphome esphome/components/mqtt/mqtt_binary_sensor.cpp.
    public static let esphomeDoorTopic = "livingroom/binary_sensor/balcony_door/state"
    public static let esphomeBinaryOn = "ON"
    public static let esphomeBinaryOff = "OFF"
    /// Birth message (retained `online`) and last will (`offline`) on `<prefix>/status`.
    /// https://esphome.io/components/mqtt.html ("Last Will And Birth Messages").
    public static let esphomeStatusTopic = "livingroom/status"
    public static let esphomeStatusOnline = "online"
    public static let esphomeStatusOffline = "offline"

    // MARK: - Shelly Gen2+

    /// `topic_prefix` defaults to the device id (`<model>-<mac>`). Status on `<prefix>/status/<component>:<id>`
    /// is only published with `status_ntf` ("Generic status update over MQTT") enabled; it is off by default.
    /// https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Mqtt
    public static let shellyHTPrefix = "shellyplusht-b8d61a8b17cc"
    /// Plus H&T components. Shapes: https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Temperature,
    /// …/Humidity, …/DevicePower (`battery.V` in volts, `battery.percent`, `external.present`).
    public static let shellyTemperatureTopic = "shellyplusht-b8d61a8b17cc/status/temperature:0"
    public static let shellyTemperature = #"{"id":0,"tC":19.8,"tF":67.6}"#
    public static let shellyHumidityTopic = "shellyplusht-b8d61a8b17cc/status/humidity:0"
    public static let shellyHumidity = #"{"id":0,"rh":54.2}"#
    public static let shellyDevicePowerTopic = "shellyplusht-b8d61a8b17cc/status/devicepower:0"
    public static let shellyDevicePower = #"{"id":0,"battery":{"V":5.42,"percent":78},"external":{"present":false}}"#

    /// A Plus 1PM relay. Switch status: `output`, `apower` (W), `voltage` (V), `current` (A), `aenergy` (Wh),
    /// `temperature` {`tC`, `tF`}; unmetered models lack the power keys.
    /// https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Switch#status
    public static let shellySwitchPrefix = "shellyplus1pm-a8032ab12345"
    public static let shellySwitchTopic = "shellyplus1pm-a8032ab12345/status/switch:0"
    public static let shellySwitchOn =
        #"{"id":0,"source":"init","output":true,"apower":12.3,"voltage":231.8,"current":0.082,"aenergy":{"total":1520.321,"by_minute":[205.111,204.992,205.004],"minute_ts":1714557600},"temperature":{"tC":43.6,"tF":110.5}}"#
    public static let shellySwitchOff =
        #"{"id":0,"source":"button","output":false,"apower":0.0,"voltage":232.1,"current":0.0,"aenergy":{"total":1520.529,"by_minute":[0.0,104.5,205.004],"minute_ts":1714557660},"temperature":{"tC":42.9,"tF":109.2}}"#

    /// Availability: retained `true` on connect, `false` as the last will, on `<prefix>/online` (as in Gen1,
    /// https://shelly-api-docs.shelly.cloud/gen1/#availability-and-announces; Gen2 consumers subscribe to the same).
    public static let shellyOnlineTopic = "shellyplus1pm-a8032ab12345/online"
    public static let shellyOnline = "true"
    public static let shellyOffline = "false"

    /// RPC notifications (with `rpc_ntf`, on by default) on `<prefix>/events/rpc`: partial status deltas.
    /// https://shelly-api-docs.shelly.cloud/gen2/General/Notifications
    public static let shellyEventsTopic = "shellyplusht-b8d61a8b17cc/events/rpc"
    public static let shellyNotifyStatus =
        #"{"src":"shellyplusht-b8d61a8b17cc","dst":"shellyplusht-b8d61a8b17cc/events","method":"NotifyStatus","params":{"ts":1714557600.12,"temperature:0":{"id":0,"tC":19.9,"tF":67.8}}}"#
}
