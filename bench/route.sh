#!/usr/bin/env bash
# The least-polluted route at scale (issue 21): `route-bench` (release build) routes random pairs on a 1,000 × 1,000
# pollution grid (25 m cells, a 25 km square) and on a synthetic road network of over 100,000 edges read from GeoJSON,
# with A* and with a plain Dijkstra on the same graph and cost; time per route (median, p90, max), nodes expanded,
# memory per route, the field's build and the network's parsing. It fails when A*'s cost is not Dijkstra's.
# Prints a Markdown report and writes it to bench/results/route-<date>.md.
# ARGS are passed to route-bench (e.g. ARGS="--grid-pairs 50 --road-pairs 500"); BUILD_PATH (.build) is SwiftPM's
# scratch path: another one lets the release build run beside a debug one.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_PATH=${BUILD_PATH:-.build}
OUT=${OUT:-bench/results/route-$(date +%F).md}
ARGS=${ARGS:-}

swift build -c release --product route-bench --scratch-path "$BUILD_PATH" >&2
bench=$(swift build -c release --scratch-path "$BUILD_PATH" --show-bin-path)/route-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck disable=SC2086 # ARGS is a list of flags
status=0
"$bench" $ARGS >"$work/report.md" || status=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
    echo "# The least-polluted route: A* beside a plain Dijkstra, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/route.sh\` (\`route-bench\`, release build${ARGS:+, \`$ARGS\`}): one process, one search at a time,"
    echo "each route timed from the call to the answer (the search's arrays allocated and filled included). Memory per"
    echo "route: how far the resident set rose during the search, measured apart from the timing, from a trimmed heap"
    echo "(\`malloc_trim\`) with the high-water mark cleared (\`/proc/self/clear_refs\`)."
    echo
    cat "$work/report.md"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
    echo "Load average (1, 5, 15 min) before the run: $load_before; after: $load_after. The machine is shared: read"
    echo "the ratios, which come from the same pairs in the same run, before the absolute times."
} | tee "$OUT"
exit "$status"
