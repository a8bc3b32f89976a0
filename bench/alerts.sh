#!/usr/bin/env bash
# The alert stage's cost (issue 37): `alert-bench` (release build) runs hubd's router with a file backend (outbox
# fsynced, file written) on 100,000 events through a plain rule, a plain rule with a silence in force, and an
# alerting rule; then 10,000 sensors offline at once, with the storm guard and without.
# Prints a Markdown report and writes it to bench/results/alerts-<date>.md. RUNS (3) runs of each, median.
# BUILD_PATH (.build) is SwiftPM's scratch path.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_PATH=${BUILD_PATH:-.build}
OUT=${OUT:-bench/results/alerts-$(date +%F).md}
export RUNS=${RUNS:-3}

swift build -c release --product alert-bench --scratch-path "$BUILD_PATH" >&2
bench=$(swift build -c release --scratch-path "$BUILD_PATH" --show-bin-path)/alert-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
TMPDIR=${BENCH_TMPDIR:-/var/tmp} "$bench" >"$work/report.md"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "# The alert stage, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/alerts.sh\` (\`alert-bench\`, release build, RUNS=$RUNS): one process, hubd's NotificationRouter"
    echo "with a file backend, its outbox and alert book on disk (\`${BENCH_TMPDIR:-/var/tmp}\`)."
    echo
    cat "$work/report.md"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
    echo "Load average (1, 5, 15 min) before the run: $load_before; after: $load_after."
} | tee "$OUT"
