#!/usr/bin/env bash
# A simulated door sensor, as SensorHub expects firmware to behave: one MQTT connection, a status every INTERVAL
# seconds (alternating open/closed) on the topic named after the sensor, retained, at QoS 1 — and a last will
# that makes the broker publish `offline` on that same topic if the sensor vanishes. A clean stop (Ctrl-C)
# publishes `offline` itself. SIGKILL (kill -9) shows the will at work.
#   examples/firmware/sensor-sim.sh kitchen 5
#   MQTT_HOST=broker.lan MQTT_PORT=1884 examples/firmware/sensor-sim.sh kitchen 5   # another broker
set -euo pipefail
sensor=${1:?usage: $0 SENSOR [INTERVAL_SECONDS]}
interval=${2:-5}
host=${MQTT_HOST:-localhost}
port=${MQTT_PORT:-1883}
echo "sensor-sim: $sensor on $host:$port (MQTT_HOST, MQTT_PORT), a status every ${interval} s; Ctrl-C stops it" >&2
trap 'mosquitto_pub -h "$host" -p "$port" -q 1 -r -t "$sensor" -m offline; exit 0' INT TERM
status=open
while true; do
    echo "$status"
    echo "$(date +%T) $sensor: $status" >&2
    sleep "$interval"
    [ "$status" = open ] && status=closed || status=open
done | mosquitto_pub -h "$host" -p "$port" -q 1 -r -t "$sensor" -l \
    --will-topic "$sensor" --will-payload offline --will-qos 1 --will-retain
