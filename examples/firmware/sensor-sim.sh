#!/usr/bin/env bash
# A simulated door sensor: one MQTT connection (as firmware keeps), a status every INTERVAL seconds alternating
# open/closed, and a last will that tells the broker to publish 'offline' on SENSOR/availability if the sensor
# vanishes (Ctrl-\ or kill -9 shows it; a clean Ctrl-C publishes 'offline' itself).
#   examples/firmware/sensor-sim.sh kitchen 5
set -euo pipefail
sensor=${1:?usage: $0 SENSOR [INTERVAL_SECONDS]}
interval=${2:-5}
host=${MQTT_HOST:-localhost}
port=${MQTT_PORT:-1883}
mosquitto_pub -h "$host" -p "$port" -q 1 -r -t "$sensor/availability" -m online
trap 'mosquitto_pub -h "$host" -p "$port" -q 1 -r -t "$sensor/availability" -m offline; exit 0' INT TERM
status=open
while true; do
    echo "$status"
    echo "$(date +%T) $sensor: $status" >&2
    sleep "$interval"
    [ "$status" = open ] && status=closed || status=open
done | mosquitto_pub -h "$host" -p "$port" -q 1 -r -t "$sensor" -l \
    --will-topic "$sensor/availability" --will-payload offline --will-qos 1 --will-retain
