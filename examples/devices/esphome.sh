#!/usr/bin/env bash
# A simulated ESPHome node using the MQTT client component, publishing what ESPHome does by default:
#   <prefix>/status                                  online, retained (birth message); offline is its last will
#   <prefix>/sensor/living_room_temperature/state    22.5   (plain text, accuracy_decimals 1), retained
#   <prefix>/sensor/living_room_humidity/state       41.2   retained
#   <prefix>/binary_sensor/balcony_door/state        ON / OFF, toggling, retained
# every INTERVAL seconds. Ctrl-C publishes offline itself; kill -9 the status mosquitto_pub (pid printed at start)
# to see the will. The prefix is the node name unless mqtt.topic_prefix says otherwise.
#   examples/devices/esphome.sh livingroom 5
set -euo pipefail
usage() {
    echo "usage: $0 [TOPIC_PREFIX] [INTERVAL_SECONDS]   (default: livingroom 10; MQTT_HOST / MQTT_PORT choose the broker, default localhost:1883)"
}
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -gt 2 ]; then usage >&2; exit 2; fi
prefix=${1:-livingroom}
interval=${2:-10}
case "$interval" in '' | *[!0-9]*) usage >&2; exit 2 ;; esac
host=${MQTT_HOST:-localhost}
port=${MQTT_PORT:-1883}
pub() { mosquitto_pub -h "$host" -p "$port" -r "$@"; }    # ESPHome retains states by default

exec 3> >(exec mosquitto_pub -h "$host" -p "$port" -r -l -t "$prefix/status" \
    --will-topic "$prefix/status" --will-payload offline --will-retain)
status_pid=$!
stop() {
    trap "" PIPE    # the connection may be gone already (kill -9 shows the will)
    echo offline >&3 2>/dev/null || true
    exec 3>&-
    wait "$status_pid" 2>/dev/null || true
    echo "$(date +%T) $prefix/status: offline" >&2
    exit 0
}
trap stop INT TERM
echo online >&3
sleep 0.3    # let that connection come up first, so availability precedes the first state
echo "$(date +%T) $prefix/status: online (connection pid $status_pid)" >&2

temp=225 hum=412 door=OFF    # tenths
while true; do
    temp=$((temp + RANDOM % 5 - 2)); hum=$((hum + RANDOM % 11 - 5))
    [ "$hum" -lt 100 ] && hum=100; [ "$hum" -gt 950 ] && hum=950
    [ "$door" = ON ] && door=OFF || door=ON
    pub -t "$prefix/sensor/living_room_temperature/state" -m "$((temp / 10)).$((temp % 10))"
    pub -t "$prefix/sensor/living_room_humidity/state" -m "$((hum / 10)).$((hum % 10))"
    pub -t "$prefix/binary_sensor/balcony_door/state" -m "$door"
    echo "$(date +%T) $((temp / 10)).$((temp % 10)) °C  $((hum / 10)).$((hum % 10)) %  door $door" >&2
    sleep "$interval" &
    wait $!
done
