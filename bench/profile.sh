#!/bin/bash
# Where a notification's CPU goes (issue 38's first step): a release hubd with 1,000 sensors and one file backend,
# state on disk, fed RATE QoS 1 status changes a second for SECS seconds by bench/pubgen.c, sampled by
# `perf record -g` (999 Hz) the whole time. Prints hubd's CPU per notification and the profile by library, by symbol
# and by thread pool, then (in a second burst, under strace) system calls per notification; keeps perf.data in $work for `perf report -i`.
#   RATE=1000 SECS=10 bench/profile.sh        (after swift build -c release --product hubd)
#   BACKEND=mqtt RATE=100 bench/profile.sh    (the notifications published to the broker, as the latency rows do)
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-1000}
SECS=${SECS:-10}
work=${PROFILE_WORK:-$(mktemp -d /tmp/hubd-profile.XXXXXX)}
pids=()
source bench/lib.sh
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
command -v perf >/dev/null || { echo "profile: skipped, perf is not installed (apt-get install linux-perf)" >&2; exit 0; }
bin=.build/release
[ -x "$bin/hubd" ] || { echo "profile: build it first: swift build -c release --product hubd" >&2; exit 2; }
gcc -O2 -o "$work/pubgen" bench/pubgen.c -lmosquitto
start_broker
rm -rf "$work/state" "$work/audit.jsonl"
make_state "$work/state" 1000
# BACKEND=mqtt: the notifications go to the broker (the latency rows' backend) and a mosquitto_sub writes them out.
if [ "${BACKEND:-file}" = mqtt ]; then
    mosquitto_sub -h 127.0.0.1 -p "$port" -t 'bench/events/#' -q 1 >"$work/audit.jsonl" &
    pids+=($!)
    backend="{type: mqtt, topic: \"bench/events/{sensor}\"}"
else
    backend="{type: file, path: $work/audit.jsonl}"
fi
start_hubd "$work/state" "notifiers:
  backends:
    audit: $backend
  rules:
    all: {events: [changed], backends: [audit]}"
sleep 1
before=$(cpu_ticks "$hub_pid")
switched=$(switches "$hub_pid")
switches_by_thread "$hub_pid" >"$work/threads.before"
"$work/pubgen" 127.0.0.1 "$port" "bench/s%d" 1000 $((RATE * SECS)) 1 0 "$RATE" >"$work/pub.log" &
publisher=$!
perf record -F 999 -g -p "$hub_pid" -o "$work/perf.data" -- sleep "$SECS" 2>"$work/perf.err"
wait "$publisher"
sleep 1
after=$(cpu_ticks "$hub_pid")
switched=$(($(switches "$hub_pid") - switched))
switches_by_thread "$hub_pid" >"$work/threads.after"
sent=$(wc -l <"$work/audit.jsonl")
cpu=$(seconds_of_ticks $((after - before)))
echo "hubd at $RATE msg/s for $SECS s: $cpu s CPU, $sent notifications, $(us_each "$cpu" "$sent") µs each"
# What the hand-offs between threads alone cost: hubd's context switches per notification (summed over its threads)
# times what one costs on this machine (bench/switchcost.c: a futex wake of a sleeping thread, 10 ms apart as at
# 100 msg/s, and back to back as in a burst).
gcc -O2 -pthread -o "$work/switchcost" bench/switchcost.c
idle_cost=$("$work/switchcost" 0 | sed -n 's/.*cpu\/hand-off \([0-9.]*\) us.*/\1/p')
busy_cost=$("$work/switchcost" 1 | sed -n 's/.*cpu\/hand-off \([0-9.]*\) us.*/\1/p')
awk -v s="$switched" -v n="$sent" -v i="$idle_cost" -v b="$busy_cost" 'BEGIN { if (n > 0) printf "-- hand-offs: %.1f context switches a notification; one costs %.1f µs of CPU from idle, %.1f back to back: %.0f–%.0f µs a notification\n", s / n, i, b, s / n * (i < b ? i : b), s / n * (i < b ? b : i) }'
echo "-- context switches a notification, by thread"
switches_by_name "$work/threads.before" "$work/threads.after" "$sent"
set +o pipefail # head closes perf report's pipe early
report() { perf report -i "$work/perf.data" --no-children --stdio -g none "$@" 2>/dev/null | grep '%' | cut -c1-120; }
echo "-- by library"; report --sort dso | head -8
echo "-- by symbol"; report --sort symbol | head -25
echo "-- by thread pool"; report --sort comm | head -6
# A second burst under strace: system calls per notification (fsyncs, futex wake-ups, writes), counted over every
# thread. strace slows hubd, so its CPU is not read here.
if command -v strace >/dev/null; then
    : >"$work/audit.jsonl"
    "$work/pubgen" 127.0.0.1 "$port" "bench/s%d" 1000 $((RATE * SECS)) 1 0 "$RATE" >"$work/pub2.log" &
    publisher=$!
    timeout -s INT "$SECS" strace -c -f -p "$hub_pid" -o "$work/strace.txt" 2>/dev/null || true
    wait "$publisher"
    sleep 1
    sent=$(wc -l <"$work/audit.jsonl")
    echo "-- system calls per notification ($sent notifications under strace)"
    awk -v n="$sent" '$NF ~ /^(fsync|fdatasync|futex|write|writev|read|openat|rename|epoll_wait|poll|ppoll|clock_nanosleep|sendto|recvfrom)$/ && n > 0 {
        calls = ($4 ~ /^[0-9]+$/) ? $4 : $3; printf "  %-16s %8.2f\n", $NF, calls / n }' "$work/strace.txt" | sort -k2 -gr
fi
echo "(perf.data in $work)"
