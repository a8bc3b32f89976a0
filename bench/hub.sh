#!/usr/bin/env bash
# The hub benchmarks (issue 8), one broker, one run, release builds, beside the references measured in the same run:
#   1. ingest: MESSAGES status messages over SENSORS sensors (two bursts from bench/pubgen.c: every message a change,
#      then the same status again, so about half are changes) — hubd, a bare mosquitto_sub, mqttwarn 0.36.1 (file);
#   2. fan-out: FANOUT status changes to hubd's file and webhook backends (one request each, and batched), and
#      mqttwarn's file and http services, published at QoS 1 and at QoS 0, beside mosquitto_sub receiving the burst;
#   3. latency from publish to notification through hubd's mqtt backend and mqttwarn's mqttpub, at 100, 1k and
#      10k msg/s (pubgen's timestamp mode): p50 / p99 / max;
#   4. scale: no sensors (the floor), 1k, 10k, 100k registered sensors — time to subscribe them all at start, RSS,
#      hubctl add / list;
#   5. idle RSS and CPU over IDLE seconds;
#   7. devices: the ingest bursts as Zigbee2MQTT door sensors' JSON (PUBGEN_SHAPE=z2m) over SENSORS sensors with
#      a value path, a map and attributes (battery, link quality, voltage) — hubd beside mosquitto_sub on the same
#      bursts (goal >= 0.8 x);
#   6. the HTTP API: CPU and time per GET /api/v1/sensors (what the dashboard polls every 2 s) at each of API_SCALES
#      sensors (no reference: mqttwarn has no API).
# mqttwarn is installed from PyPI into .build/bench/mqttwarn. Prints a Markdown report, written to
# bench/results/hub-<date>.md. Goals: ingest >= 0.8 x mosquitto_sub; p99 <= 5 ms at 1k msg/s; RSS <= 30 MB with 10k
# sensors; fan-out >= 20 x mqttwarn.
set -euo pipefail
cd "$(dirname "$0")/.."

MESSAGES=${MESSAGES:-200000}
SENSORS=${SENSORS:-1000}
FANOUT=${FANOUT:-50000}
SCALES=${SCALES:-"1000 10000 100000"}
IDLE=${IDLE:-30}
API_SCALES=${API_SCALES:-"1000 10000"}
API_POLLS=${API_POLLS:-100}
HOOK_CONCURRENCY=${HOOK_CONCURRENCY:-8}
HOOK_BATCH=${HOOK_BATCH:-100}
OUT=${OUT:-bench/results/hub-$(date +%Y-%m-%d).md}

scripts/install-deps
for product in hubd hubctl bench-sink; do swift build -c release --product "$product" >&2; done
bin=$(swift build -c release --show-bin-path)
mkdir -p .build/bench
gcc -O2 -o .build/bench/pubgen bench/pubgen.c -lmosquitto
pubgen=.build/bench/pubgen
venv=.build/bench/mqttwarn
if [ ! -x "$venv/bin/mqttwarn" ]; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "mqttwarn==0.36.1" >&2
fi
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
    local port=$((20000 + RANDOM % 20000))
    while ! port_is_free "$port"; do port=$((20000 + RANDOM % 20000)); done
    echo "$port"
}
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
rss_mib() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# The process's own memory (heap and stacks), without the code and data pages of its binary and libraries.
anon_mib() { awk '/RssAnon/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ratio() { printf '%.2f' "$(echo "scale=4; $1 / $2" | bc)"; }
per_second() { echo "scale=0; $1 / $2" | bc; }

port=$(free_port)
cat >"$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 0
# Without it the broker's Nagle delays add 10-20 ms to every hop at 1k msg/s, for hubd and mqttwarn alike.
set_tcp_nodelay true
user $(id -un)
CONF
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
"$mosquitto" -c "$work/mosquitto.conf" >"$work/broker.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do port_is_free "$port" || break; sleep 0.05; done

# A state directory with N sensors s0…s(N-1) on bench/s<i>, pointed at the broker.
make_state() {
    mkdir -p "$1"
    # A client id of its own: a persistent session left by an earlier run must not replay its queue into this one.
    awk -v n="$2" -v port="$port" -v id="bench-$(basename "$1")-$$" 'BEGIN {
        print "{\n  \"schemaVersion\": 1,\n  \"broker\": {\"host\": \"127.0.0.1\", \"port\": " port ", \"clientId\": \"" id "\"},\n  \"sensors\": ["
        for (i = 0; i < n; i++) printf "    {\"name\": \"s%d\", \"topic\": \"bench/s%d\", \"status\": \"Waiting\", \"added\": \"2026-11-22T10:00:00.000Z\", \"kind\": \"status\"}%s\n", i, i, (i < n - 1) ? "," : ""
        print "  ]\n}"
    }' >"$1/defaults.json"
}

# Starts hubd on state directory $1 with configuration $2 (YAML, http.listen added) and waits until it has
# subscribed; sets hub_pid, hub_http and hub_ready (seconds from start to subscribed).
start_hubd() {
    local state=$1
    printf '%s\nhttp: {listen: "127.0.0.1:0"}\n' "$2" >"$state/hubd.yaml"
    local t0; t0=$(now)
    # Notice: the ready line, and not a line per status change (that would be measured too).
    HUB_STATE_DIR=$state "$bin/hubd" --config "$state/hubd.yaml" --log-level notice 2>"$state/hubd.log" &
    hub_pid=$!
    pids+=("$hub_pid")
    until grep -q "\] ready$" "$state/hubd.log"; do
        kill -0 "$hub_pid" || { cat "$state/hubd.log" >&2; exit 1; }
        sleep 0.02
    done
    hub_ready=$(elapsed "$t0")
    until grep -q 'address=127.0.0.1:[0-9]*' "$state/hubd.log"; do sleep 0.02; done
    hub_http=$(grep -o 'address=127.0.0.1:[0-9]*' "$state/hubd.log" | head -1 | cut -d: -f2)
}
stop_hubd() { kill "$hub_pid" 2>/dev/null || true; wait "$hub_pid" 2>/dev/null || true; }
metric() { curl -s "http://127.0.0.1:$hub_http/metrics" | awk -v name="$1" '$1 == name { print $2 }'; }
# A lost message would otherwise hang the benchmark: give up after WAIT_LIMIT seconds, saying what was missing.
WAIT_LIMIT=${WAIT_LIMIT:-300}
wait_metric() { # name, target
    local start=$SECONDS
    until [ "$(metric "$1" | cut -d. -f1)" -ge "$2" ] 2>/dev/null; do
        ((SECONDS - start < WAIT_LIMIT)) || { echo "bench: $1 reached $(metric "$1") of $2 in ${WAIT_LIMIT}s" >&2; exit 1; }
        sleep 0.02
    done
}
wait_lines() { # file, count
    local start=$SECONDS
    until [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ]; do
        ((SECONDS - start < WAIT_LIMIT)) || { echo "bench: $1 has $(wc -l <"$1") of $2 lines in ${WAIT_LIMIT}s" >&2; exit 1; }
        sleep 0.02
    done
}

# mqttwarn with one service: $1 = name, $2 = [config:…] section, $3 = targets for bench/#.
start_mqttwarn() {
    cat >"$work/$1.ini" <<INI
[defaults]
hostname = '127.0.0.1'
port = $port
clientid = 'mqttwarn-$1'
loglevel = WARN
logfile = '$work/$1.log'
launch = $(echo "$3" | cut -d: -f1)

$2

[bench/#]
targets = $3
INI
    MQTTWARNINI="$work/$1.ini" "$venv/bin/mqttwarn" >"$work/$1.stdout" 2>&1 &
    warn_pid=$!
    pids+=("$warn_pid")
    sleep 3  # it subscribes after connecting; no readiness signal
}
stop_mqttwarn() { kill "$warn_pid" 2>/dev/null || true; wait "$warn_pid" 2>/dev/null || true; }

two_bursts() { # half changes: STATES=2 (each message a change), then STATES=1 (mostly repeats)
    "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" $((MESSAGES / 2)) 1 2 >/dev/null
    "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" $((MESSAGES / 2)) 1 1 >/dev/null
}

latency() { # subscriber output "recv_unix_seconds payload" → p50 p99 max in ms
    python3 - "$1" <<'PY'
import json, re, sys
values = []
for line in open(sys.argv[1]):
    received, _, payload = line.strip().partition(" ")
    try:
        payload = json.loads(payload)["status"]  # hubd's event JSON (its old_status holds the previous stamp)
    except (ValueError, KeyError, TypeError):
        pass  # mqttwarn republishes the payload as it came
    match = re.fullmatch(r"t(\d{15,})", str(payload))
    if match:
        values.append(float(received) * 1000 - int(match.group(1)) / 1e6)
values.sort()
if not values:
    print("- - - 0"); sys.exit()
pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
print(f"{pick(0.5):.2f} {pick(0.99):.2f} {values[-1]:.2f} {len(values)}")
PY
}

rows=()
# mosquitto_sub, then hubd on a state directory $1 of SENSORS sensors (its registry edited by the sed expression
# $2, if any), each receiving the two bursts; sets sub_time, hub_time, changes, rejected and hub_rss.
sub_then_hubd() {
    (mosquitto_sub -h 127.0.0.1 -p "$port" -t 'bench/#' -q 1 -C "$MESSAGES" -W 600 >/dev/null; now >"$work/sub.end") &
    sub=$!
    sleep 1
    t0=$(now); two_bursts; wait "$sub"
    sub_time=$(echo "$(cat "$work/sub.end") - $t0" | bc)
    make_state "$work/$1" "$SENSORS"
    if [ -n "$2" ]; then sed -i "$2" "$work/$1/defaults.json"; fi
    start_hubd "$work/$1" ""
    t0=$(now); two_bursts; wait_metric sensorhub_messages_total "$MESSAGES"
    hub_time=$(elapsed "$t0")
    changes=$(metric sensorhub_status_changes_total)
    rejected=$(curl -s "http://127.0.0.1:$hub_http/metrics" | awk '/^sensorhub_rejected_messages_total/ { n += $2 } END { print n + 0 }')
    hub_rss=$(rss_mib "$hub_pid")
    stop_hubd
}

section_ingest() {
    echo "1. ingest" >&2
    sub_then_hubd ingest ""
    # mqttwarn (file)
    start_mqttwarn ingest "[config:file]
append_newline = True
targets = {'out': ['$work/mqttwarn-ingest.out']}" "file:out"
    t0=$(now); two_bursts; wait_lines "$work/mqttwarn-ingest.out" "$MESSAGES"
    warn_time=$(elapsed "$t0")
    warn_rss=$(rss_mib "$warn_pid")
    stop_mqttwarn
    rows+=("| 1 ingest | mosquitto_sub | $(printf '%.2f' "$sub_time") s | $(per_second "$MESSAGES" "$sub_time") msg/s | 1.00 × mosquitto_sub | |")
    rows+=("| 1 ingest | **hubd** ($changes changes applied) | $(printf '%.2f' "$hub_time") s | $(per_second "$MESSAGES" "$hub_time") msg/s | **$(ratio "$sub_time" "$hub_time") × mosquitto_sub** (goal ≥ 0.8) | RSS $hub_rss MiB |")
    rows+=("| 1 ingest | mqttwarn (file) | $(printf '%.2f' "$warn_time") s | $(per_second "$MESSAGES" "$warn_time") msg/s | $(ratio "$sub_time" "$warn_time") × mosquitto_sub | RSS $warn_rss MiB |")
}

section_devices() {
    echo "7. devices (Zigbee2MQTT JSON)" >&2
    export PUBGEN_SHAPE=z2m
    # Each sensor follows its payload's `contact`, mapped, the other fields kept as attributes.
    sub_then_hubd devices 's/"kind": "status"}/"kind": "status", "value": "contact", "map": "true=closed,false=open"}/'
    unset PUBGEN_SHAPE
    rows+=("| 7 devices (Z2M JSON) | mosquitto_sub | $(printf '%.2f' "$sub_time") s | $(per_second "$MESSAGES" "$sub_time") msg/s | 1.00 × mosquitto_sub | |")
    rows+=("| 7 devices (Z2M JSON) | **hubd** (value path, map, 3 attributes; $changes changes, $rejected rejected) | $(printf '%.2f' "$hub_time") s | $(per_second "$MESSAGES" "$hub_time") msg/s | **$(ratio "$sub_time" "$hub_time") × mosquitto_sub** (goal ≥ 0.8) | RSS $hub_rss MiB |")
}

section_fanout() {
    echo "2. fan-out" >&2
    # Each fan-out burst goes through the broker first, so its time has a floor: what a bare mosquitto_sub needs to
    # receive the same burst. At QoS 1 that floor (the broker's PUBACK round trips) is near 20 x mqttwarn's time on
    # its own, so the burst is also sent at QoS 0, where the subscribers' own work is what is measured.
    # One burst to an HTTP sink through hubd's webhook (with $3 added to its settings) or mqttwarn's http service;
    # prints the seconds from the burst to the sink's last notification. $1 names the run.
    to_sink() { # name, hubd | mqttwarn, webhook settings
        local out="$work/sink-$1.out" sink sink_port t0
        "$bin/bench-sink" "$FANOUT" >"$out" &
        sink=$!; pids+=("$sink")
        until grep -q ready "$out"; do sleep 0.02; done
        sink_port=$(awk '/ready/ { print $2 }' "$out")
        if [ "$2" = hubd ]; then
            make_state "$work/fan-$1" "$SENSORS"
            start_hubd "$work/fan-$1" "notifiers:
  backends:
    hook: {type: webhook, url: 'http://127.0.0.1:$sink_port/', queue_size: 100000, $3}
  rules:
    all: {backends: [hook]}" >&2
        else
            start_mqttwarn "http-$1" "[config:http]
timeout = 60
targets = {'post': ['post', 'http://127.0.0.1:$sink_port/', None, None]}" "http:post" >&2
        fi
        t0=$(now); $burst >/dev/null; until grep -q done "$out"; do sleep 0.02; done
        echo "$(awk '/done/ { print $2 }' "$out") - $t0" | bc
        if [ "$2" = hubd ]; then stop_hubd; else stop_mqttwarn; fi
        kill "$sink"
    }
    fanout() { # qos
        local qos=$1 burst="$pubgen 127.0.0.1 $port bench/s%d $SENSORS $FANOUT $1 2"
        local sub_t hub_file hub_hook hub_batch warn_file warn_http t0
        (mosquitto_sub -h 127.0.0.1 -p "$port" -t 'bench/#' -q 1 -C "$FANOUT" -W 600 >/dev/null; now >"$work/fsub.end") &
        local sub=$!
        sleep 1
        t0=$(now); $burst >/dev/null; wait "$sub"
        sub_t=$(echo "$(cat "$work/fsub.end") - $t0" | bc)

        make_state "$work/fan-file-$qos" "$SENSORS"
        start_hubd "$work/fan-file-$qos" "notifiers:
  backends:
    audit: {type: file, path: $work/hub-fanout-$qos.jsonl, queue_size: 100000}
  rules:
    all: {backends: [audit]}"
        t0=$(now); $burst >/dev/null; wait_lines "$work/hub-fanout-$qos.jsonl" "$FANOUT"
        hub_file=$(elapsed "$t0"); stop_hubd

        hub_hook=$(to_sink "hub-$qos" hubd "concurrency: $HOOK_CONCURRENCY")
        # The same with batch: what is waiting goes as one JSON array per request (the sink counts the array).
        hub_batch=$(to_sink "batch-$qos" hubd "concurrency: $HOOK_CONCURRENCY, batch: $HOOK_BATCH")

        start_mqttwarn "fanfile$qos" "[config:file]
append_newline = True
targets = {'out': ['$work/mqttwarn-fanout-$qos.out']}" "file:out"
        t0=$(now); $burst >/dev/null; wait_lines "$work/mqttwarn-fanout-$qos.out" "$FANOUT"
        warn_file=$(elapsed "$t0"); stop_mqttwarn

        warn_http=$(to_sink "warn-$qos" mqttwarn)

        local what="2 fan-out, QoS $qos"
        rows+=("| $what | mosquitto_sub (receives the burst: the floor) | $(printf '%.2f' "$sub_t") s | $(per_second "$FANOUT" "$sub_t") /s | at most $(ratio "$warn_file" "$sub_t") × mqttwarn (file) | |")
        rows+=("| $what, file | **hubd** | $(printf '%.2f' "$hub_file") s | $(per_second "$FANOUT" "$hub_file") /s | **$(ratio "$warn_file" "$hub_file") × mqttwarn** (goal ≥ 20) | durable outbox included |")
        rows+=("| $what, file | mqttwarn | $(printf '%.2f' "$warn_file") s | $(per_second "$FANOUT" "$warn_file") /s | 1.00 | |")
        rows+=("| $what, webhook | **hubd** | $(printf '%.2f' "$hub_hook") s | $(per_second "$FANOUT" "$hub_hook") /s | **$(ratio "$warn_http" "$hub_hook") × mqttwarn** (goal ≥ 20) | concurrency $HOOK_CONCURRENCY |")
        rows+=("| $what, webhook | **hubd**, batch: $HOOK_BATCH | $(printf '%.2f' "$hub_batch") s | $(per_second "$FANOUT" "$hub_batch") /s | **$(ratio "$warn_http" "$hub_batch") × mqttwarn** | JSON arrays of up to $HOOK_BATCH |")
        rows+=("| $what, webhook | mqttwarn (http) | $(printf '%.2f' "$warn_http") s | $(per_second "$FANOUT" "$warn_http") /s | 1.00 | |")
    }
    fanout 1
    fanout 0
}

section_latency() {
    echo "3. latency" >&2
    measure_latency() { # topic filter, rate, count → p50 p99 max n
        local out="$work/lat-$RANDOM.out"
        mosquitto_sub -h 127.0.0.1 -p "$port" -t "$1" -q 1 -F '%U %p' -C "$3" -W 120 >"$out" &
        local sub=$!
        sleep 0.5
        "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" "$3" 1 0 "$2" >/dev/null
        wait "$sub" || true
        latency "$out"
    }
    make_state "$work/latency" "$SENSORS"
    start_hubd "$work/latency" "notifiers:
  backends:
    bus: {type: mqtt, topic: 'latency/{sensor}', queue_size: 100000}
  rules:
    all: {backends: [bus]}"
    latency_runs() { # topic filter → a line "rate p50 p99 max n" for each rate
        for spec in "100 1000" "1000 10000" "10000 50000"; do
            read -r rate count <<<"$spec"
            echo "$rate $(measure_latency "$1" "$rate" "$count")"
        done
    }
    mapfile -t hub_lat < <(latency_runs 'latency/#')
    stop_hubd
    start_mqttwarn latency "[config:mqttpub]
targets = {'out': ['mqttwarn/latency', 1, False]}" "mqttpub:out"
    mapfile -t warn_lat < <(latency_runs 'mqttwarn/latency')
    stop_mqttwarn
    for i in 0 1 2; do
        read -r rate p50 p99 max n <<<"${hub_lat[$i]}"
        read -r _ wp50 wp99 wmax wn <<<"${warn_lat[$i]}"
        goal=""; [ "$rate" = 1000 ] && goal=" (goal p99 ≤ 5)"
        rows+=("| 3 latency @ $rate msg/s | **hubd** (mqtt) | p50 $p50 ms | **p99 $p99 ms**$goal | max $max ms | $n of $((rate == 100 ? 1000 : rate == 1000 ? 10000 : 50000)) |")
        rows+=("| 3 latency @ $rate msg/s | mqttwarn (mqttpub) | p50 $wp50 ms | p99 $wp99 ms | max $wmax ms | $wn received |")
    done
}

section_scale() {
    echo "4. scale" >&2
    # The floor: hubd with no sensors at all, so the code pages it maps just to run (the kernel maps up to 64 KiB
    # around each page of code it first executes) stand apart from what each sensor costs.
    make_state "$work/scale-none" 0
    start_hubd "$work/scale-none" ""
    rows+=("| 4 scale, no sensors (the floor) | **hubd** | ready in $(printf '%.2f' "$hub_ready") s | RSS $(rss_mib "$hub_pid") MiB ($(anon_mib "$hub_pid") anon) | | |")
    stop_hubd
    for n in $SCALES; do
        make_state "$work/scale-$n" "$n"
        start_hubd "$work/scale-$n" ""
        ready_rss=$(rss_mib "$hub_pid"); ready_anon=$(anon_mib "$hub_pid")
        "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$n" "$n" 1 2 >/dev/null
        wait_metric sensorhub_messages_total "$n"
        sleep 2  # a flush of every status to the store
        after_rss=$(rss_mib "$hub_pid"); after_anon=$(anon_mib "$hub_pid")
        stop_hubd
        t0=$(now); HUB_STATE_DIR="$work/scale-$n" "$bin/hubctl" sensors add extra >/dev/null; add=$(elapsed "$t0")
        t0=$(now); HUB_STATE_DIR="$work/scale-$n" "$bin/hubctl" sensors list --json >/dev/null; list=$(elapsed "$t0")
        goal=""; [ "$n" = 10000 ] && goal=" (goal ≤ 30)"
        rows+=("| 4 scale, $n sensors | **hubd** | subscribed all in $(printf '%.2f' "$hub_ready") s | RSS $ready_rss MiB ($ready_anon anon) at ready, **$after_rss MiB ($after_anon anon)** after a status each$goal | hubctl add $(printf '%.0f' "$(echo "$add * 1000" | bc)") ms | list --json $(printf '%.0f' "$(echo "$list * 1000" | bc)") ms |")
    done
}

section_idle() {
    echo "5. idle" >&2
    make_state "$work/idle" "$SENSORS"
    start_hubd "$work/idle" ""
    mosquitto_sub -h 127.0.0.1 -p "$port" -t 'bench/#' >/dev/null &
    idle_sub=$!; pids+=("$idle_sub")
    start_mqttwarn idle "[config:file]
targets = {'out': ['$work/idle.out']}" "file:out"
    h0=$(cpu_ticks "$hub_pid"); s0=$(cpu_ticks "$idle_sub"); w0=$(cpu_ticks "$warn_pid")
    sleep "$IDLE"
    tick=$(getconf CLK_TCK)
    cpu() { printf '%.2f' "$(echo "scale=4; ($(cpu_ticks "$1") - $2) * 100 / $tick / $IDLE" | bc)"; }
    rows+=("| 5 idle ${IDLE} s | **hubd** ($SENSORS sensors) | RSS **$(rss_mib "$hub_pid") MiB** ($(anon_mib "$hub_pid") anon) | CPU **$(cpu "$hub_pid" "$h0") %** | | |")
    rows+=("| 5 idle ${IDLE} s | mosquitto_sub | RSS $(rss_mib "$idle_sub") MiB ($(anon_mib "$idle_sub") anon) | CPU $(cpu "$idle_sub" "$s0") % | | |")
    rows+=("| 5 idle ${IDLE} s | mqttwarn | RSS $(rss_mib "$warn_pid") MiB ($(anon_mib "$warn_pid") anon) | CPU $(cpu "$warn_pid" "$w0") % | | |")
    stop_hubd; stop_mqttwarn
}

# Polls the sensor list API_POLLS times: sets poll_wall (seconds) and poll_ticks (hubd's CPU ticks meanwhile).
poll_sensors() {
    local c0 t0; c0=$(cpu_ticks "$hub_pid"); t0=$(now)
    for _ in $(seq "$API_POLLS"); do curl -s -o /dev/null "http://127.0.0.1:$hub_http/api/v1/sensors"; done
    poll_wall=$(elapsed "$t0"); poll_ticks=$(($(cpu_ticks "$hub_pid") - c0))
}

section_api() {
    echo "6. api" >&2
    local tick; tick=$(getconf CLK_TCK)
    per_poll() { echo "scale=2; $1 * 1000 / $tick / $API_POLLS" | bc; }
    wall_ms() { printf '%.1f' "$(echo "$poll_wall * 1000 / $API_POLLS" | bc -l)"; }
    for n in $API_SCALES; do
        make_state "$work/api-$n" "$n"
        start_hubd "$work/api-$n" ""
        local bytes; bytes=$(curl -s "http://127.0.0.1:$hub_http/api/v1/sensors" | wc -c)
        sleep 2  # the registry file settles (hubd reads a file younger than 2 s again on every poll)
        poll_sensors
        rows+=("| 6 API, $n sensors, quiet | **hubd** | GET /api/v1/sensors ($((bytes / 1024)) KiB): **$(per_poll "$poll_ticks") ms CPU** | $(wall_ms) ms each (curl included) | $API_POLLS polls | |")
        # Statuses changing: hubd replaces the registry file every second, so most polls decode it again.
        (while true; do mosquitto_pub -h 127.0.0.1 -p "$port" -t bench/s0 -m "$RANDOM"; sleep 0.2; done) &
        local changer=$!
        sleep 1
        poll_sensors
        # What hubd spends on the changing statuses alone over the same time, to subtract.
        local c1; c1=$(cpu_ticks "$hub_pid"); sleep "$(printf '%.1f' "$poll_wall")"; local alone; alone=$(($(cpu_ticks "$hub_pid") - c1))
        kill "$changer" 2>/dev/null; wait "$changer" 2>/dev/null || true
        rows+=("| 6 API, $n sensors, a status changing 5×/s | **hubd** | GET /api/v1/sensors: **$(per_poll $((poll_ticks - alone))) ms CPU** (registry decoded again) | $(wall_ms) ms each | $API_POLLS polls | |")
        stop_hubd
    done
}

# SECTIONS picks some of them (e.g. SECTIONS="fanout scale" while profiling); the report has their rows only.
for section in ${SECTIONS:-ingest devices fanout latency scale idle api}; do
    case $section in
    ingest | devices | fanout | latency | scale | idle | api) ;;
    *) echo "bench: no section '$section' (ingest, devices, fanout, latency, scale, idle, api)" >&2; exit 2 ;;
    esac
    "section_$section"
done

{
    echo "# Hub benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "One broker (Mosquitto, persistence off, unlimited queues, set_tcp_nodelay), release builds, one run; \`bench/pubgen.c\` as"
    echo "the load generator at QoS 1; mqttwarn 0.36.1 from PyPI with one service at a time. Command: \`make bench\`"
    echo "(MESSAGES=$MESSAGES SENSORS=$SENSORS FANOUT=$FANOUT HOOK_CONCURRENCY=$HOOK_CONCURRENCY HOOK_BATCH=$HOOK_BATCH SCALES=\"$SCALES\" IDLE=$IDLE API_SCALES=\"$API_SCALES\" API_POLLS=$API_POLLS)."
    echo
    echo "| what | who | time | rate | ratio | notes |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Ingest and fan-out time runs from the first publish to the last message applied (hubd's /metrics), the"
    echo "last line written, or the last request received. Latency is publish (pubgen's wall clock in the payload)"
    echo "to a subscriber's receipt of the notification (mosquitto_sub's %U). RSS counts the code pages of hubd's binary"
    echo "and of the Swift runtime, Foundation, NIO and BoringSSL that are mapped (file-backed, clean, shared: the"
    echo "no-sensors row is that floor); anon is its own heap and stacks. A fan-out burst must first pass the broker:"
    echo "the mosquitto_sub row of each QoS is that floor, and bounds every subscriber's ratio to mqttwarn."
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs),"
    echo "$(free -g | awk '/Mem:/ { print $2 }') GiB, $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r);"
    echo "$("$mosquitto" -h 2>&1 | head -1 | sed 's/ is an MQTT.*//'); $(swift --version 2>/dev/null | head -1);"
    echo "$("$venv/bin/python" --version)."
} | tee "$OUT"
