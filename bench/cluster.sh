#!/usr/bin/env bash
# Issues 23 and 35: the registry in PostgreSQL beside the JSON store, and 1, 2 and 3 cluster agents on one broker,
# all in one run; then subscribing SUBSCRIBE_SENSORS sensors (100,000) with 1 and 3 agents beside the broker's floor. Each scenario: SENSORS sensors, one QoS 1 burst of MESSAGES statuses from bench/pubgen.c (every message
# a change), timed from the start of the burst until hubd has taken every message (the agents' messages counters
# add up to MESSAGES: in a cluster, a message is counted once its step is committed); RUNS runs, median and
# spread. Rows:
#   - JSON store, one hubd (the reference: what a home runs);
#   - PostgreSQL store, one hubd, no cluster (statuses flushed to their rows every flush interval, as for the file);
#   - PostgreSQL cluster, 1, 2 and 3 agents (every batch committed under its sensors' row locks, with its events and
#     their notifications' outbox rows, before it is acknowledged).
# Subscribing: from starting the agents (all at once) until each says it is ready (its share of the partitions
# connected and subscribed: the broker has every sensor's topic on some partition's session), beside one libmosquitto
# client subscribing the same topics, 500 to a SUBSCRIBE, timed from its CONNACK to the last SUBACK (bench/subgen.c).
# PostgreSQL 15 runs from a fresh initdb in a temporary directory, with fsync on (what a real server does; the tests'
# servers run with fsync off). Everything shares this machine's two cores: the agents, the broker, PostgreSQL and
# the publisher — so the agents' rows show what the cluster costs beside one agent, not how it scales (docs/cluster.md
# says what should scale across machines and why). Prints a Markdown report, written to OUT
# (bench/results/cluster-<date>.md).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
MESSAGES=${MESSAGES:-20000}
SENSORS=${SENSORS:-1000}
SUBSCRIBE_SENSORS=${SUBSCRIBE_SENSORS:-100000}
OUT=${OUT:-bench/results/cluster-$(date +%Y-%m-%d).md}

scripts/install-deps
for product in hubd hubctl; do swift build -c release --product "$product" >&2; done
bin=$(swift build -c release --show-bin-path)
mkdir -p .build/bench
gcc -O2 -o .build/bench/pubgen bench/pubgen.c -lmosquitto
gcc -O2 -o .build/bench/subgen bench/subgen.c -lmosquitto
pubgen=.build/bench/pubgen
subgen=.build/bench/subgen
pgbin=/usr/lib/postgresql/15/bin
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
touch "$work/warnings" "$work/quiet"
# shellcheck source=bench/lib.sh
. bench/lib.sh

# The broker (the agents hold acknowledgements until a commit: its queues are unbounded).
start_broker

# PostgreSQL, as the `postgres` user under root (it refuses to run as root).
as_pg=()
if [ "$(id -u)" = 0 ]; then
    as_pg=(/usr/bin/setpriv --reuid=postgres --regid=postgres --clear-groups)
    install -d -o postgres -g postgres "$work/pg"
else
    mkdir -p "$work/pg"
fi
pgport=$(free_port)
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg/data" -U sensorhub --auth=trust -E UTF8 --locale=C.UTF-8 >"$work/initdb.log"
"${as_pg[@]}" "$pgbin/postgres" -D "$work/pg/data" -p "$pgport" -k "$work/pg" -c listen_addresses=127.0.0.1 \
    -c max_connections=60 -c dynamic_shared_memory_type=mmap >"$work/postgres.log" 2>&1 &
pids+=($!)
until grep -q "ready to accept connections" "$work/postgres.log"; do sleep 0.1; done
psql_do() { "$pgbin/psql" -h "$work/pg" -p "$pgport" -U sensorhub -d "${2:-postgres}" -At -c "$1"; }

# The sensors, for `hubctl sensors import`.
sensors_csv() { awk -v n="$1" 'BEGIN { print "name,topic"; for (i = 0; i < n; i++) printf "s%d,bench/s%d\n", i, i }'; }
sensors_csv "$SENSORS" >"$work/sensors.csv"
sensors_csv "$SUBSCRIBE_SENSORS" >"$work/sensors-subscribe.csv"

# Starts hubd as agent $1 on state directory $2 with configuration $3, without waiting; `await_agent` waits for it.
launch_agent() {
    local state=$2
    mkdir -p "$state"
    printf '%s\nhttp: {listen: "127.0.0.1:0", public: [/metrics]}\n' "$3" >"$state/hubd.yaml"
    : >"$state/hubd.log"
    HUB_STATE_DIR=$state "$bin/hubd" --config "$state/hubd.yaml" --log-level notice 2>"$state/hubd.log" &
    local pid=$!
    pids+=("$pid")
    echo "$pid" >"$state/pid"
}
# Waits until the agent on state directory $1 is ready; appends its pid and HTTP port to $work/agents.
await_agent() {
    local state=$1 pid
    pid=$(cat "$state/pid")
    until grep -q "\] ready$" "$state/hubd.log"; do
        kill -0 "$pid" || { cat "$state/hubd.log" >&2; exit 1; }
        sleep 0.05
    done
    until grep -q 'address=127.0.0.1:[0-9]*' "$state/hubd.log"; do sleep 0.05; done
    echo "$pid $(grep -o 'address=127.0.0.1:[0-9]*' "$state/hubd.log" | head -1 | cut -d: -f2)" >>"$work/agents"
}
start_agent() {
    launch_agent "$@"
    await_agent "$2"
}
taken() { # the agents' messages counters, added up
    local sum=0 count
    while read -r _ http; do
        count=$(curl -s "http://127.0.0.1:$http/metrics" | awk '$1 == "sensorhub_messages_total" { print $2 }')
        sum=$((sum + ${count%.*}))
    done <"$work/agents"
    echo "$sum"
}
stop_agents() {
    while read -r pid _; do kill "$pid" 2>/dev/null || true; done <"$work/agents"
    while read -r pid _; do wait "$pid" 2>/dev/null || true; done <"$work/agents"
    : >"$work/agents"
}
agents_ticks() { local sum=0; while read -r pid _; do sum=$((sum + $(cpu_ticks "$pid"))); done <"$work/agents"; echo "$sum"; }

# One run of a scenario: $1 = store (json | postgres), $2 = agents (0: no cluster). Prints "seconds cpu_seconds".
scenario() {
    local store=$1 agents=$2 run=$3 yaml="" id="bench-$1-$2-$3-$$"
    : >"$work/agents"
    local dir="$work/$id"
    mkdir -p "$dir"
    if [ "$store" = postgres ]; then
        psql_do "CREATE DATABASE \"$id\"" >/dev/null
        yaml="store: {url: postgres://sensorhub@127.0.0.1:$pgport/$id}"
    fi
    local admin="$dir/admin"
    mkdir -p "$admin"
    printf '%s\n' "$yaml" >"$admin/hubd.yaml"
    HUB_STATE_DIR=$admin "$bin/hubctl" broker set --host 127.0.0.1 --port "$port" --client-id "$id" \
        --config "$admin/hubd.yaml" >/dev/null
    HUB_STATE_DIR=$admin "$bin/hubctl" sensors import "$work/sensors.csv" --config "$admin/hubd.yaml" >/dev/null
    if [ "$agents" = 0 ]; then
        start_agent hub "$admin" "$yaml"
    else
        for agent in $(seq "$agents"); do
            start_agent "hub-$agent" "$dir/hub-$agent" \
                "$yaml"$'\n'"cluster: {group: $id, agent: hub-$agent, lease: 15s}"
        done
    fi
    wait_quiet "$store, $agents agents, run $run"
    local before; before=$(agents_ticks)
    local t0; t0=$(now)
    "$pubgen" 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" "$MESSAGES" 1 2 >/dev/null
    local start=$SECONDS
    until [ "$(taken)" -ge "$MESSAGES" ]; do
        ((SECONDS - start < 600)) || { echo "bench: $(taken) of $MESSAGES messages taken in 600 s" >&2; exit 1; }
        sleep 0.05
    done
    local took; took=$(elapsed "$t0")
    local ticks=$(($(agents_ticks) - before))
    stop_agents
    echo "$took $(seconds_of_ticks "$ticks")"
}

# Subscribing SUBSCRIBE_SENSORS sensors: $1 agents started together, from their start until every one is ready.
# Prints seconds.
subscribing() {
    local agents=$1 run=$2 id="subscribe-$1-$2-$$"
    : >"$work/agents"
    local dir="$work/$id" admin="$work/$id/admin"
    mkdir -p "$admin"
    psql_do "CREATE DATABASE \"$id\"" >/dev/null
    local yaml="store: {url: postgres://sensorhub@127.0.0.1:$pgport/$id}"
    printf '%s\n' "$yaml" >"$admin/hubd.yaml"
    HUB_STATE_DIR=$admin "$bin/hubctl" broker set --host 127.0.0.1 --port "$port" --client-id "$id" \
        --config "$admin/hubd.yaml" >/dev/null
    HUB_STATE_DIR=$admin "$bin/hubctl" sensors import "$work/sensors-subscribe.csv" --config "$admin/hubd.yaml" \
        >/dev/null
    wait_quiet "subscribing $SUBSCRIBE_SENSORS sensors, $agents agents, run $run"
    local t0; t0=$(now)
    for agent in $(seq "$agents"); do
        launch_agent "hub-$agent" "$dir/hub-$agent" "$yaml"$'\n'"cluster: {group: $id, agent: hub-$agent}"
    done
    for agent in $(seq "$agents"); do await_agent "$dir/hub-$agent"; done
    local took; took=$(elapsed "$t0")
    stop_agents
    echo "$took"
}

rows=("json 0 JSON store, one hubd" "postgres 0 PostgreSQL store, one hubd" "postgres 1 PostgreSQL cluster, 1 agent"
    "postgres 2 PostgreSQL cluster, 2 agents" "postgres 3 PostgreSQL cluster, 3 agents")
declare -A rates cpus
for row in "${rows[@]}"; do
    read -r store agents _ <<<"$row"
    list="" cpu_list=""
    for run in $(seq "$RUNS"); do
        read -r took cpu <<<"$(scenario "$store" "$agents" "$run")"
        list+="$(per_second "$MESSAGES" "$took") "
        cpu_list+="$(us_each "$cpu" "$MESSAGES") "
        echo "bench: $store, $agents agents, run $run: $took s, $cpu s of hubd CPU" >&2
    done
    rates["$store $agents"]=$list
    cpus["$store $agents"]=$cpu_list
done

floor="" subscribe_one="" subscribe_three=""
for run in $(seq "$RUNS"); do
    wait_quiet "the broker alone subscribing $SUBSCRIBE_SENSORS topics, run $run"
    floor+="$("$subgen" 127.0.0.1 "$port" 'bench/s%d' "$SUBSCRIBE_SENSORS" | awk '{ print $4 }') "
    subscribe_one+="$(subscribing 1 "$run") "
    subscribe_three+="$(subscribing 3 "$run") "
    echo "bench: subscribing $SUBSCRIBE_SENSORS, run $run: floor, 1 agent, 3 agents: $floor / $subscribe_one /" \
        "$subscribe_three" >&2
done

reference=$(median ${rates["json 0"]})
{
    echo "# Cluster and PostgreSQL store benchmark ($(date +%Y-%m-%d), $(nproc) cores, RUNS=$RUNS)"
    echo
    echo "$SENSORS sensors, one QoS 1 burst of $MESSAGES status changes (bench/pubgen.c), from its start until every"
    echo "message is taken (committed, in a cluster). Median (spread) of $RUNS runs; hubd CPU is all agents' together."
    echo "Agents, broker, PostgreSQL (fsync on) and the publisher share $(nproc) cores: the agents' rows show what the"
    echo "cluster costs beside one agent, not how it scales across machines (docs/cluster.md)."
    echo
    echo "| scenario | messages/s | × JSON store | hubd CPU µs a message |"
    echo "|---|---|---|---|"
    for row in "${rows[@]}"; do
        read -r store agents label <<<"$row"
        rate=$(median ${rates["$store $agents"]})
        echo "| $label | $(spread '%s' '' ${rates["$store $agents"]}) | $(ratio "$rate" "$reference") |" \
            "$(median ${cpus["$store $agents"]}) |"
    done
    echo
    echo "Subscribing $SUBSCRIBE_SENSORS sensors: from starting the agents (together) until each is ready, its share of"
    echo "the 24 partitions connected and subscribed; the floor is one libmosquitto client subscribing the same topics,"
    echo "500 to a SUBSCRIBE, from its CONNACK to the last SUBACK (bench/subgen.c). Median (spread) of $RUNS runs."
    echo
    echo "| | seconds | × the broker's floor |"
    echo "|---|---|---|"
    echo "| the broker's floor, one client | $(spread '%.2f' ' s' $floor) | 1.00 |"
    echo "| cluster, 1 agent | $(spread '%.2f' ' s' $subscribe_one) | $(ratio "$(median $subscribe_one)" "$(median $floor)") |"
    echo "| cluster, 3 agents | $(spread '%.2f' ' s' $subscribe_three) |" \
        "$(ratio "$(median $subscribe_three)" "$(median $floor)") |"
    if [ -s "$work/warnings" ]; then
        echo
        cat "$work/warnings"
    fi
} | tee "$OUT"
