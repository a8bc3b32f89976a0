#!/usr/bin/env bash
# What the alert stage costs today's fan-out (issue 37: within 10 % of the fan-out before it, with no alert feature
# configured). hubd at HEAD and hubd at BASE (92112ca, the last commit before the alert stage), both release builds,
# take the same FANOUT status changes (QoS 1, bench/pubgen.c) through a plain rule to a file backend on one broker,
# RUNS times each, alternating (base, head, base, head…) after a quiet machine each time; then HEAD with the same rule
# made an alerting one (group_by: [sensor], group_wait: 0s: a message per change, the book written per burst).
# Prints a Markdown report and writes it to OUT (bench/results/alerts-ab-<date>.md). BASE is built once in
# .build/ab (a git worktree and its own scratch path).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
FANOUT=${FANOUT:-50000}
SENSORS=${SENSORS:-1000}
BASE=${BASE:-92112ca}
OUT=${OUT:-bench/results/alerts-ab-$(date +%F).md}

scripts/install-deps
swift build -c release --product hubd >&2
bin=$(swift build -c release --show-bin-path)
head_hubd=$bin/hubd
if [ ! -d .build/ab/base ]; then
    mkdir -p .build/ab
    git worktree add --detach .build/ab/base "$BASE" >&2
fi
(cd .build/ab/base && git checkout -q --detach "$BASE" && swift build -c release --product hubd --scratch-path ../base-build >&2)
base_hubd=$(cd .build/ab/base && swift build -c release --scratch-path ../base-build --show-bin-path)/hubd
mkdir -p .build/bench
gcc -O2 -o .build/bench/pubgen bench/pubgen.c -lmosquitto
pubgen=.build/bench/pubgen

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_work
start_broker

plain="all: {backends: [audit]}"
alerting="all: {backends: [audit], group_by: [sensor], group_wait: 0s}"
# One burst through hubd $1 with rule $2; prints the seconds to the last line and hubd's CPU seconds.
burst() { # hubd, rule, name
    local state="$work/$3" out="$work/$3.jsonl" t0 c0
    make_state "$state" "$SENSORS"
    hubd=$1 start_hubd "$state" "notifiers:
  backends:
    audit: {type: file, path: $out, queue_size: 100000}
  rules:
    $2"
    wait_quiet "$3"
    c0=$(cpu_ticks "$hub_pid"); t0=$(now)
    $pubgen 127.0.0.1 "$port" bench/s%d "$SENSORS" "$FANOUT" 1 2 >/dev/null
    wait_lines "$out" "$FANOUT"
    echo "$(elapsed "$t0") $(seconds_of_ticks $(($(cpu_ticks "$hub_pid") - c0)))"
    stop_hubd
}

base_t="" base_c="" head_t="" head_c="" alert_t="" alert_c=""
for run in $(seq "$RUNS"); do
    read -r t c <<<"$(burst "$base_hubd" "$plain" "base-$run")"; base_t+=" $t"; base_c+=" $c"
    read -r t c <<<"$(burst "$head_hubd" "$plain" "head-$run")"; head_t+=" $t"; head_c+=" $c"
    read -r t c <<<"$(burst "$head_hubd" "$alerting" "alert-$run")"; alert_t+=" $t"; alert_c+=" $c"
done

# shellcheck disable=SC2086
row() { # what, times, cpus
    local t c
    t=$(median $2); c=$(median $3)
    echo "| $1 | $(per_second "$FANOUT" "$t") | $(spread "%.2f" " s" $2) | $(us_each "$c" "$FANOUT") | $(ratio "$(median $base_t)" "$t") × |"
}
{
    echo "# The alert stage beside the fan-out before it, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/alerts-ab.sh\` (release builds, RUNS=$RUNS alternating, FANOUT=$FANOUT changes over $SENSORS sensors at QoS 1,"
    echo "a file backend, journal and outbox on disk in \`${TMPDIR:-/tmp}\`): hubd end to end, MQTT to file."
    echo
    echo "| hubd | changes/s | seconds (spread) | CPU µs a change | throughput × base |"
    echo "|---|---|---|---|---|"
    row "base ($BASE, before the alert stage), plain rule" "$base_t" "$base_c"
    row "HEAD ($(git rev-parse --short HEAD)), plain rule: no alert feature" "$head_t" "$head_c"
    row "HEAD, the rule alerting (group_by: [sensor], a message per change)" "$alert_t" "$alert_c"
    echo
    # shellcheck disable=SC2086
    echo "Goal (issue 37): HEAD's plain rule ≥ 0.90 × base: **$(ratio "$(median $base_t)" "$(median $head_t)") ×**."
    if [ -s "$work/warnings" ]; then
        echo
        echo "Bursts measured on a busy machine (what|% busy besides the bench): $(paste -sd' ' "$work/warnings")"
    fi
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
} | tee "$OUT"
