#!/usr/bin/env bash
# A simulated Zigbee2MQTT (2.x) bridge with four Aqara sensors, publishing what the real one does:
#   <base>/bridge/state          {"state":"online"}, retained, QoS 1; also the bridge's last will ({"state":"offline"})
#   <base>/bridge/devices        the device list (Coordinator + 4 sensors), retained
#   <base>/<name>/availability   {"state":"online"} per device, retained, QoS 1
#   <base>/<name>                device state JSON every INTERVAL seconds, not retained (Z2M's default)
# Z2M_LEGACY_AVAILABILITY=1 sends plain online / offline on bridge/state and availability instead, as Z2M 1.x did by default
# (advanced.legacy_availability_payload, removed in 2.0).
# The door sensor's friendly name, "garden/shed door", contains a slash and a space, as Z2M allows. Its contact
# toggles (contact true = closed), the temperature drifts, batteries slowly drop, motion and leaks come and go.
# Ctrl-C publishes {"state":"offline"} on bridge/state; devices' availability stays retained as it was (real Z2M
# does the same), so a consumer should treat every device as unavailable while the bridge is offline. To see the
# last will, kill -9 the mosquitto_pub holding bridge/state (its pid is printed at start).
#   examples/devices/zigbee2mqtt-bridge.sh zigbee2mqtt 5
set -euo pipefail
usage() {
    echo "usage: $0 [BASE_TOPIC] [INTERVAL_SECONDS]   (default: zigbee2mqtt 10; Z2M_LEGACY_AVAILABILITY=1 for 1.x plain payloads; MQTT_HOST / MQTT_PORT choose the broker, default localhost:1883)"
}
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -gt 2 ]; then usage >&2; exit 2; fi
base=${1:-zigbee2mqtt}
interval=${2:-10}
case "$interval" in '' | *[!0-9]*) usage >&2; exit 2 ;; esac
host=${MQTT_HOST:-localhost}
port=${MQTT_PORT:-1883}
pub() { mosquitto_pub -h "$host" -p "$port" "$@"; }
if [ "${Z2M_LEGACY_AVAILABILITY:-0}" = 1 ]; then
    online=online offline=offline
else
    online='{"state":"online"}' offline='{"state":"offline"}'
fi

# One long-lived connection carries bridge/state, so the broker can publish the last will if this script dies.
exec 3> >(exec mosquitto_pub -h "$host" -p "$port" -q 1 -r -l -t "$base/bridge/state" \
    --will-topic "$base/bridge/state" --will-payload "$offline" --will-qos 1 --will-retain)
bridge_pid=$!
stop() {
    trap "" PIPE    # the connection may be gone already (kill -9 shows the will)
    echo "$offline" >&3 2>/dev/null || true
    exec 3>&-
    wait "$bridge_pid" 2>/dev/null || true
    echo "$(date +%T) $base/bridge/state: offline" >&2
    exit 0
}
trap stop INT TERM
echo "$online" >&3
sleep 0.3    # let that connection come up first, so availability precedes the first state
echo "$(date +%T) $base/bridge/state: online (connection pid $bridge_pid)" >&2

# Same shape as DeviceFixtures.zigbee2mqttBridgeDevices (Tests/HubTestKit/DeviceFixtures.swift).
battery_x='{"access":1,"category":"diagnostic","description":"Remaining battery in %, can take up to 24 hours before reported","label":"Battery","name":"battery","property":"battery","type":"numeric","unit":"%","value_max":100,"value_min":0}'
voltage_x='{"access":1,"category":"diagnostic","description":"Voltage of the battery in millivolts","label":"Voltage","name":"voltage","property":"voltage","type":"numeric","unit":"mV"}'
lqi_x='{"access":1,"category":"diagnostic","description":"Link quality (signal strength)","label":"Linkquality","name":"linkquality","property":"linkquality","type":"numeric","unit":"lqi","value_max":255,"value_min":0}'
contact_x='{"access":1,"description":"Indicates if the contact is closed (= true) or open (= false)","label":"Contact","name":"contact","property":"contact","type":"binary","value_off":true,"value_on":false}'
devtemp_x='{"access":1,"category":"diagnostic","description":"Temperature of the device","label":"Device temperature","name":"device_temperature","property":"device_temperature","type":"numeric","unit":"°C"}'
occupancy_x='{"access":1,"description":"Indicates whether the device detected occupancy","label":"Occupancy","name":"occupancy","property":"occupancy","type":"binary","value_off":false,"value_on":true}'
illuminance_x='{"access":1,"description":"Measured illuminance","label":"Illuminance","name":"illuminance","property":"illuminance","type":"numeric","unit":"lx"}'
temperature_x='{"access":1,"description":"Measured temperature value","label":"Temperature","name":"temperature","property":"temperature","type":"numeric","unit":"°C"}'
humidity_x='{"access":1,"description":"Measured relative humidity","label":"Humidity","name":"humidity","property":"humidity","type":"numeric","unit":"%"}'
pressure_x='{"access":1,"description":"The measured atmospheric pressure","label":"Pressure","name":"pressure","property":"pressure","type":"numeric","unit":"hPa"}'
leak_x='{"access":1,"description":"Indicates whether the device detected a water leak","label":"Water leak","name":"water_leak","property":"water_leak","type":"binary","value_off":false,"value_on":true}'
battery_low_x='{"access":1,"category":"diagnostic","description":"Indicates if the battery of this device is almost empty","label":"Battery low","name":"battery_low","property":"battery_low","type":"binary","value_off":false,"value_on":true}'
# device IEEE NAME MODEL DESCRIPTION MODEL_ID NWK INPUT_CLUSTERS EXPOSES...
device() {
    local ieee=$1 name=$2 model=$3 desc=$4 model_id=$5 nwk=$6 clusters=$7 exposes
    shift 7
    exposes=$(IFS=,; echo "$*")
    printf '{"definition":{"description":"%s","exposes":[%s],"model":"%s","options":[],"source":"native","supports_ota":false,"vendor":"Aqara"},"disabled":false,"endpoints":{"1":{"bindings":[],"clusters":{"input":[%s],"output":["genBasic"]},"configured_reportings":[],"scenes":[]}},"friendly_name":"%s","ieee_address":"%s","interview_completed":true,"interview_state":"SUCCESSFUL","interviewing":false,"manufacturer":"LUMI","model_id":"%s","network_address":%s,"power_source":"Battery","supported":true,"type":"EndDevice"}' \
        "$desc" "$exposes" "$model" "$clusters" "$name" "$ieee" "$model_id" "$nwk"
}
coordinator='{"disabled":false,"endpoints":{"1":{"bindings":[],"clusters":{"input":[],"output":[]},"configured_reportings":[],"scenes":[]}},"friendly_name":"Coordinator","ieee_address":"0x00124b0024c2d8a1","interview_completed":true,"interview_state":"SUCCESSFUL","interviewing":false,"network_address":0,"supported":true,"type":"Coordinator"}'
door="garden/shed door" motion=hallway_motion climate=living_room_climate leak=kitchen_leak
devices="[$coordinator,$(device 0x00158d0004a1b2c3 "$door" MCCGQ11LM "Door and window sensor" lumi.sensor_magnet.aq2 29159 \
    '"genBasic","genIdentify","genOnOff"' "$battery_x" "$contact_x" "$devtemp_x" "$voltage_x" "$lqi_x"),$(device \
    0x00158d0002f4e5d6 "$motion" RTCGQ11LM "Motion sensor" lumi.sensor_motion.aq2 40321 \
    '"genBasic","msOccupancySensing","msIlluminanceMeasurement"' "$battery_x" "$occupancy_x" "$illuminance_x" "$voltage_x" "$lqi_x"),$(device \
    0x00158d0001e7f8a9 "$climate" WSDCGQ11LM "Temperature and humidity sensor" lumi.weather 51122 \
    '"genBasic","msTemperatureMeasurement","msRelativeHumidity","msPressureMeasurement"' \
    "$battery_x" "$temperature_x" "$humidity_x" "$pressure_x" "$voltage_x" "$lqi_x"),$(device \
    0x00158d0003c4d5e6 "$leak" SJCGQ11LM "Water leak sensor" lumi.sensor_wleak.aq1 8843 \
    '"genBasic","genPowerCfg","ssIasZone"' "$battery_x" "$voltage_x" "$leak_x" "$battery_low_x" "$lqi_x")]"
pub -q 1 -r -t "$base/bridge/devices" -m "$devices"

for name in "$door" "$motion" "$climate" "$leak"; do
    pub -q 1 -r -t "$base/$name/availability" -m "$online"
done
echo "$(date +%T) $base: bridge online, 4 devices announced" >&2

contact=true temp=2134 hum=4472 press=10042 battery=100 tick=0
lqi() { echo $((80 + RANDOM % 80)); }
while true; do
    # contact toggles; temperature and humidity drift; battery drops 1 % every 10 rounds (voltage follows).
    [ "$contact" = true ] && contact=false || contact=true
    temp=$((temp + RANDOM % 41 - 20)); [ "$temp" -lt 1500 ] && temp=1500; [ "$temp" -gt 3000 ] && temp=3000
    hum=$((hum + RANDOM % 101 - 50)); [ "$hum" -lt 2000 ] && hum=2000; [ "$hum" -gt 8000 ] && hum=8000
    press=$((press + RANDOM % 5 - 2))
    tick=$((tick + 1)); [ $((tick % 10)) -eq 0 ] && [ "$battery" -gt 1 ] && battery=$((battery - 1))
    volt=$((2850 + 150 * battery / 100))
    occupancy=false; [ $((RANDOM % 3)) -eq 0 ] && occupancy=true
    wet=false; [ $((RANDOM % 20)) -eq 0 ] && wet=true
    low=false; [ "$battery" -le 10 ] && low=true
    pub -t "$base/$door" -m "{\"battery\":$battery,\"contact\":$contact,\"linkquality\":$(lqi),\"voltage\":$volt}"
    pub -t "$base/$motion" -m "{\"battery\":$battery,\"illuminance\":$((RANDOM % 400)),\"linkquality\":$(lqi),\"occupancy\":$occupancy,\"voltage\":$volt}"
    pub -t "$base/$climate" -m "$(printf '{"battery":%d,"humidity":%d.%02d,"linkquality":%d,"pressure":%d.%d,"temperature":%d.%02d,"voltage":%d}' \
        "$battery" $((hum / 100)) $((hum % 100)) "$(lqi)" $((press / 10)) $((press % 10)) $((temp / 100)) $((temp % 100)) "$volt")"
    pub -t "$base/$leak" -m "{\"battery\":$battery,\"battery_low\":$low,\"linkquality\":$(lqi),\"voltage\":$volt,\"water_leak\":$wet}"
    echo "$(date +%T) $door: contact=$contact  $climate: $((temp / 100)).$((temp % 100 / 10)) °C  battery=$battery%" >&2
    sleep "$interval" &
    wait $!
done
