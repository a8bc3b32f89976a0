#!/usr/bin/env bash
# The receive benchmark (issue 2): a burst of MESSAGES status messages over SENSORS topics from bench/pubgen.c,
# received in turn by a bare `mosquitto_sub` and by the Swift wrapper (`mosquitto-probe receive`, release build),
# on one broker in one run, ROUNDS times each, alternating. Prints a Markdown report and writes it to
# bench/results/receive-<date>.md.
#
# Each subscriber subscribes to bench/#, is told ready by a retained message (mosquitto_sub) or its SUBACK
# (the probe), then pubgen publishes the burst; the time is from pubgen's start to the last message, on the same
# wall clock for both: mosquitto_sub's exit (it exits at its last message), the probe's own stamp (its graceful
# disconnect afterwards is not receiving). The goal is the wrapper at >= 0.9 x mosquitto_sub.
set -euo pipefail
cd "$(dirname "$0")/.."

MESSAGES=${MESSAGES:-200000}
SENSORS=${SENSORS:-1000}
ROUNDS=${ROUNDS:-5}
QOS_LEVELS=${QOS_LEVELS:-"0 1"}
OUT=${OUT:-bench/results/receive-$(date +%Y-%m-%d).md}

scripts/install-deps
swift build -c release --product mosquitto-probe >&2
probe=$(swift build -c release --show-bin-path)/mosquitto-probe
mkdir -p .build/bench
gcc -O2 -o .build/bench/pubgen bench/pubgen.c -lmosquitto
pubgen=.build/bench/pubgen
work=$(mktemp -d)
broker_pid=
cleanup() {
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=$((20000 + RANDOM % 20000))
while ! port_is_free "$port"; do port=$((20000 + RANDOM % 20000)); done
cat > "$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
# A burst must not be dropped for a subscriber that is momentarily behind; both subscribers get the same broker.
max_queued_messages 0
user $(id -un)
CONF
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
"$mosquitto" -c "$work/mosquitto.conf" >"$work/broker.log" 2>&1 &
broker_pid=$!
for _ in $(seq 100); do port_is_free "$port" || break; sleep 0.05; done
mosquitto_pub -h 127.0.0.1 -p "$port" -t bench/ready -m ready -r -q 1

now() { date +%s.%N; }

# Prints the seconds from the burst's start until mosquitto_sub has all of it.
run_mosquitto_sub() {
    local qos=$1 ready="$work/ready"
    rm -f "$ready"
    (mosquitto_sub -h 127.0.0.1 -p "$port" -t 'bench/#' -q "$qos" -C $((MESSAGES + 1)) -W 300 \
        | { read -r first; echo "$first" >"$ready"; cat >/dev/null; }) &
    local sub=$!
    while [ ! -s "$ready" ]; do sleep 0.01; done
    local t0; t0=$(now)
    "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" "$MESSAGES" "$qos" >/dev/null
    wait "$sub"
    echo "$(now) - $t0" | bc
}

# Prints the seconds from the burst's start until the Swift wrapper has all of it.
run_wrapper() {
    local qos=$1 out="$work/probe.out"
    rm -f "$out"
    "$probe" receive --port "$port" --filter 'bench/#' --qos "$qos" --count $((MESSAGES + 1)) --timeout 300 >"$out" &
    local sub=$!
    while ! grep -q '^ready' "$out" 2>/dev/null; do sleep 0.01; done
    local t0; t0=$(now)
    "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" "$MESSAGES" "$qos" >/dev/null
    wait "$sub"
    # Until the last message arrived: the probe's disconnect afterwards is not part of receiving.
    echo "$(awk '/^last-message-at/ { print $2 }' "$out") - $t0" | bc
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rate() { echo "scale=0; $MESSAGES / $1" | bc; }
seconds() { printf '%.3f ' "$@"; }

rows=()
for qos in $QOS_LEVELS; do
    sub_times=() wrapper_times=()
    for round in $(seq "$ROUNDS"); do
        sub_times+=("$(run_mosquitto_sub "$qos")")
        wrapper_times+=("$(run_wrapper "$qos")")
        echo "QoS $qos round $round: mosquitto_sub ${sub_times[-1]} s, wrapper ${wrapper_times[-1]} s" >&2
    done
    sub_median=$(echo "${sub_times[*]}" | median)
    wrapper_median=$(echo "${wrapper_times[*]}" | median)
    ratio=$(printf '%.2f' "$(echo "scale=4; $sub_median / $wrapper_median" | bc)")
    rows+=("| $qos | mosquitto_sub | $(printf '%.3f' "$sub_median") | $(rate "$sub_median") | 1.00 | $(seconds "${sub_times[@]}") |")
    rows+=("| $qos | Swift wrapper | $(printf '%.3f' "$wrapper_median") | $(rate "$wrapper_median") | $ratio | $(seconds "${wrapper_times[@]}") |")
done

{
    echo "# Receive benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "$MESSAGES messages over $SENSORS topics from \`bench/pubgen.c\` (payloads \"open\"/\"closed\"), one broker,"
    echo "$ROUNDS rounds per subscriber, alternating; median seconds from the burst's start to the last message."
    echo "Command: \`make bench\` (MESSAGES=$MESSAGES SENSORS=$SENSORS ROUNDS=$ROUNDS QOS_LEVELS=\"$QOS_LEVELS\")."
    echo "mosquitto_sub prints and flushes every message to a pipe (read by cat); the wrapper's probe counts them."
    echo
    echo "| QoS | subscriber | median s | msg/s | × mosquitto_sub | all rounds (s) |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs),"
    echo "$(free -g | awk '/Mem:/ { print $2 }') GiB, $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r);"
    echo "$("$mosquitto" -h 2>&1 | head -1 | sed 's/ is an MQTT.*//'), libmosquitto $(dpkg-query -W -f='${Version}' libmosquitto1 2>/dev/null),"
    echo "$(swift --version 2>/dev/null | head -1)."
} | tee "$OUT"
