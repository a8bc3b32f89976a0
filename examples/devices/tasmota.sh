#!/usr/bin/env bash
# A simulated Tasmota device (a Sonoff TH with an AM2301 and a DS18B20, and a relay), publishing what Tasmota does:
#   tele/<topic>/LWT      Online, retained, on connect; Offline is its last will
#   tele/<topic>/SENSOR   {"Time":…,"AM2301":{…,"DewPoint":…},"DS18B20":{"Id":…,"Temperature":…},"TempUnit":"C"}
#                         every INTERVAL seconds (real devices: TelePeriod, 300 s), not retained
#   stat/<topic>/RESULT   {"POWER":"ON"} and stat/<topic>/POWER ON/OFF when the relay switches (every 5th round)
# TASMOTA_ZIGBEE=1 makes it a Zigbee bridge instead: tele/<topic>/SENSOR carries ZbReceived reports of a door
# sensor whose Contact toggles (0 = closed, 1 = open).
# Ctrl-C publishes Offline itself; kill -9 the LWT mosquitto_pub (pid printed at start) to see the will.
#   examples/devices/tasmota.sh tasmota_A1B2C3 5
set -euo pipefail
usage() {
    echo "usage: $0 [TOPIC] [INTERVAL_SECONDS]   (default: tasmota_A1B2C3 10; TASMOTA_ZIGBEE=1 for a Zigbee bridge; MQTT_HOST / MQTT_PORT choose the broker, default localhost:1883)"
}
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -gt 2 ]; then usage >&2; exit 2; fi
topic=${1:-tasmota_A1B2C3}
interval=${2:-10}
case "$interval" in '' | *[!0-9]*) usage >&2; exit 2 ;; esac
host=${MQTT_HOST:-localhost}
port=${MQTT_PORT:-1883}
pub() { mosquitto_pub -h "$host" -p "$port" "$@"; }

exec 3> >(exec mosquitto_pub -h "$host" -p "$port" -q 1 -r -l -t "tele/$topic/LWT" \
    --will-topic "tele/$topic/LWT" --will-payload Offline --will-qos 1 --will-retain)
lwt_pid=$!
stop() {
    trap "" PIPE    # the connection may be gone already (kill -9 shows the will)
    echo Offline >&3 2>/dev/null || true
    exec 3>&-
    wait "$lwt_pid" 2>/dev/null || true
    echo "$(date +%T) tele/$topic/LWT: Offline" >&2
    exit 0
}
trap stop INT TERM
echo Online >&3
sleep 0.3    # let that connection come up first, so availability precedes the first state
echo "$(date +%T) tele/$topic/LWT: Online (connection pid $lwt_pid)" >&2

temp=22.6 hum=32.4 water=20.9 power=OFF contact=0 round=0
while true; do
    now=$(date +%Y-%m-%dT%H:%M:%S)    # Tasmota's Time is local time, without a zone
    if [ "${TASMOTA_ZIGBEE:-0}" = 1 ]; then
        contact=$((1 - contact))
        payload="{\"ZbReceived\":{\"0x662E\":{\"Device\":\"0x662E\",\"Name\":\"shed_door\",\"Contact\":$contact,\"Endpoint\":1,\"LinkQuality\":$((120 + RANDOM % 60))}}}"
        echo "$(date +%T) 0x662E shed_door: Contact=$contact" >&2
    else
        read -r temp hum water dew < <(awk -v t="$temp" -v h="$hum" -v w="$water" -v r1="$RANDOM" -v r2="$RANDOM" -v r3="$RANDOM" 'BEGIN {
            t += (r1 % 11 - 5) / 10; h += (r2 % 21 - 10) / 10; w += (r3 % 5 - 2) / 10
            if (h < 15) h = 15; if (h > 95) h = 95
            g = log(h / 100) + 17.62 * t / (243.12 + t)        # Magnus formula, as Tasmota computes DewPoint
            printf "%.1f %.1f %.1f %.1f\n", t, h, w, 243.12 * g / (17.62 - g) }')
        payload="{\"Time\":\"$now\",\"AM2301\":{\"Temperature\":$temp,\"Humidity\":$hum,\"DewPoint\":$dew},\"DS18B20\":{\"Id\":\"030597946B04\",\"Temperature\":$water},\"TempUnit\":\"C\"}"
        echo "$(date +%T) AM2301 $temp °C $hum %  DS18B20 $water °C" >&2
    fi
    pub -t "tele/$topic/SENSOR" -m "$payload"
    round=$((round + 1))
    if [ "${TASMOTA_ZIGBEE:-0}" != 1 ] && [ $((round % 5)) -eq 1 ]; then
        [ "$power" = ON ] && power=OFF || power=ON
        pub -t "stat/$topic/RESULT" -m "{\"POWER\":\"$power\"}"
        pub -t "stat/$topic/POWER" -m "$power"
        echo "$(date +%T) relay $power" >&2
    fi
    sleep "$interval" &
    wait $!
done
