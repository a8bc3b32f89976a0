#!/usr/bin/env bash
# `hubctl sensors import` at scale (issue 16): N sensors (10,000) from CSV, JSON and YAML into an empty registry,
# and CSV into a registry that already holds N others; hubctl's release build, median of ROUNDS runs,
# wall-clock milliseconds including process start. Goal: 10,000 in under 2 s.
# Prints a Markdown report and writes it to bench/results/import-<date>.md.
# BUILD_PATH (.build) is SwiftPM's scratch path: another one lets the release build run beside a debug one.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-10000}
ROUNDS=${ROUNDS:-5}
BUILD_PATH=${BUILD_PATH:-.build}
OUT=${OUT:-bench/results/import-$(date +%Y-%m-%d).md}

scripts/install-deps
swift build -c release --product hubctl --scratch-path "$BUILD_PATH" >&2
hubctl=$(swift build -c release --scratch-path "$BUILD_PATH" --show-bin-path)/hubctl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The CSV, then the same sensors as JSON and YAML from hubctl's own export of them.
awk -v n="$N" 'BEGIN {
    print "name,topic,kind,silenceTimeout"
    for (i = 0; i < n; i++) printf "sensor %d,home/sensor-%d/status,status,%s\n", i, i, (i % 10 == 0) ? "15m" : ""
}' >"$work/sensors.csv"
"$hubctl" sensors import "$work/sensors.csv" --state-dir "$work/seed" >/dev/null
"$hubctl" sensors export "$work/sensors.json" --state-dir "$work/seed" 2>/dev/null
"$hubctl" sensors export "$work/sensors.yaml" --state-dir "$work/seed" 2>/dev/null
# Another N sensors, for importing into a registry that is not empty.
awk -v n="$N" 'BEGIN { print "name,topic"; for (i = 0; i < n; i++) printf "other %d,other/%d\n", i, i }' \
    >"$work/others.csv"

# Median wall-clock milliseconds of ROUNDS imports of file $1 into a fresh copy of state directory $2 (or none).
median_ms() {
    local times=()
    for round in $(seq "$ROUNDS"); do
        local state="$work/state-$round-$RANDOM"
        [ -n "$2" ] && cp -r "$2" "$state"
        local start end
        start=$(date +%s%N)
        "$hubctl" sensors import "$1" --state-dir "$state" >/dev/null
        end=$(date +%s%N)
        times+=($(((end - start) / 1000000)))
        rm -rf "$state"
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

report() {
    echo "## \`hubctl sensors import\`, $(date +%Y-%m-%d)"
    echo
    echo "$N sensors, hubctl (release build), median of $ROUNDS runs, wall-clock milliseconds including process"
    echo "start, one locked write of the registry each. Goal: 10,000 in under 2,000 ms."
    echo
    echo "| file | into | ms |"
    echo "|---|---|---|"
    echo "| CSV ($(du -k "$work/sensors.csv" | cut -f1) KiB) | an empty registry | $(median_ms "$work/sensors.csv" "") |"
    echo "| JSON ($(du -k "$work/sensors.json" | cut -f1) KiB) | an empty registry | $(median_ms "$work/sensors.json" "") |"
    echo "| YAML ($(du -k "$work/sensors.yaml" | cut -f1) KiB) | an empty registry | $(median_ms "$work/sensors.yaml" "") |"
    echo "| CSV | a registry of $N others | $(median_ms "$work/others.csv" "$work/seed") |"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
}

mkdir -p "$(dirname "$OUT")"
report | tee "$OUT"
