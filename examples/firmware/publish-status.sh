#!/usr/bin/env bash
# What sensor firmware does, from a shell: publish a sensor's status string to the topic named after it.
# Retained, so a hub that starts later still learns the current status; QoS 1, so the broker queues it for a
# hub that is briefly away.
#   examples/firmware/publish-status.sh kitchen open
#   MQTT_HOST=broker.lan examples/firmware/publish-status.sh "front door" closed
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 SENSOR STATUS   (MQTT_HOST / MQTT_PORT choose the broker; default localhost:1883)" >&2
    exit 2
fi
exec mosquitto_pub -h "${MQTT_HOST:-localhost}" -p "${MQTT_PORT:-1883}" -q 1 -r -t "$1" -m "$2"
