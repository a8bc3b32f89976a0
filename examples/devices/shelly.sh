#!/usr/bin/env bash
# A simulated Shelly Plus 1PM (Gen2) with a Plus Add-on DS18B20, publishing what Gen2 firmware does with
# "Generic status update over MQTT" (status_ntf) and RPC notifications (rpc_ntf) enabled:
#   <prefix>/online                  true, retained, on connect; false is its last will
#   <prefix>/status/switch:0         {"id":0,"source":…,"output":…,"apower":…,"voltage":…,"current":…,
#                                     "aenergy":{…},"temperature":{"tC":…,"tF":…}} every INTERVAL seconds
#   <prefix>/status/temperature:100  {"id":100,"tC":…,"tF":…} (Add-on sensors get ids from 100)
#   <prefix>/events/rpc              a NotifyStatus delta when the relay switches (every 4th round)
# The prefix is the device id (<model>-<mac>) unless topic_prefix is set. Ctrl-C publishes false itself; kill -9
# the online mosquitto_pub (pid printed at start) to see the will.
#   examples/devices/shelly.sh shellyplus1pm-a8032ab12345 5
set -euo pipefail
usage() {
    echo "usage: $0 [TOPIC_PREFIX] [INTERVAL_SECONDS]   (default: shellyplus1pm-a8032ab12345 10; MQTT_HOST / MQTT_PORT choose the broker, default localhost:1883)"
}
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -gt 2 ]; then usage >&2; exit 2; fi
prefix=${1:-shellyplus1pm-a8032ab12345}
interval=${2:-10}
case "$interval" in '' | *[!0-9]*) usage >&2; exit 2 ;; esac
host=${MQTT_HOST:-localhost}
port=${MQTT_PORT:-1883}
pub() { mosquitto_pub -h "$host" -p "$port" -q 1 "$@"; }

exec 3> >(exec mosquitto_pub -h "$host" -p "$port" -q 1 -r -l -t "$prefix/online" \
    --will-topic "$prefix/online" --will-payload false --will-qos 1 --will-retain)
online_pid=$!
stop() {
    trap "" PIPE    # the connection may be gone already (kill -9 shows the will)
    echo false >&3 2>/dev/null || true
    exec 3>&-
    wait "$online_pid" 2>/dev/null || true
    echo "$(date +%T) $prefix/online: false" >&2
    exit 0
}
trap stop INT TERM
echo true >&3
sleep 0.3    # let that connection come up first, so availability precedes the first state
echo "$(date +%T) $prefix/online: true (connection pid $online_pid)" >&2

output=false source=init energy=1520321 round=0 probe=198    # energy in mWh, probe in tenths of °C
while true; do
    round=$((round + 1))
    if [ $((round % 4)) -eq 1 ]; then
        [ "$output" = true ] && output=false || output=true
        [ "$round" -gt 1 ] && source=button
        pub -t "$prefix/events/rpc" -m "{\"src\":\"$prefix\",\"dst\":\"$prefix/events\",\"method\":\"NotifyStatus\",\"params\":{\"ts\":$(date +%s).00,\"switch:0\":{\"id\":0,\"output\":$output,\"source\":\"$source\"}}}"
        echo "$(date +%T) switch:0 output=$output" >&2
    fi
    read -r status tc < <(awk -v on="$output" -v e="$energy" -v r1="$RANDOM" -v r2="$RANDOM" -v now="$(date +%s)" -v src="$source" 'BEGIN {
        v = 229 + (r1 % 60) / 10; p = (on == "true") ? 11.5 + (r2 % 20) / 10 : 0
        tc = (on == "true") ? 43.5 + (r2 % 10) / 10 : 38.2 + (r2 % 10) / 10
        printf "{\"id\":0,\"source\":\"%s\",\"output\":%s,\"apower\":%.1f,\"voltage\":%.1f,\"current\":%.3f,", src, on, p, v, p / v
        printf "\"aenergy\":{\"total\":%.3f,\"by_minute\":[%.3f,0.000,0.000],\"minute_ts\":%d},", e / 1000, p * 1000 / 60, now - now % 60
        printf "\"temperature\":{\"tC\":%.1f,\"tF\":%.1f}} %.1f\n", tc, tc * 9 / 5 + 32, tc }')
    [ "$output" = true ] && energy=$((energy + 12 * interval * 1000 / 3600))
    pub -t "$prefix/status/switch:0" -m "$status"
    probe=$((probe + RANDOM % 5 - 2))
    pub -t "$prefix/status/temperature:100" -m "$(awk -v t="$probe" 'BEGIN { printf "{\"id\":100,\"tC\":%.1f,\"tF\":%.1f}", t / 10, t / 10 * 9 / 5 + 32 }')"
    echo "$(date +%T) switch:0 output=$output device ${tc} °C  probe $((probe / 10)).$((probe % 10)) °C" >&2
    sleep "$interval" &
    wait $!
done
