#!/usr/bin/env bash
# What a commit to the history costs an SD card, by commit interval (issue 55; `history.commit_interval`): a release
# hubd makes history.sqlite (its own schema and migrations) in a fresh state directory and stops; the file is aged
# with DAYS (7) of a home's rows (20 sensors, 4 messages a second), then 10 minutes of the same are committed at each
# interval from 1 s to 15 min, and the pages SQLite appended to the write-ahead log are counted
# (`bench/history-commits.py`). Prints a Markdown table and writes it to OUT
# (bench/results/history-commits-<date>.md). BENCH_TMPDIR (/var/tmp): where the file lives.
set -euo pipefail
cd "$(dirname "$0")/.."

DAYS=${DAYS:-7}
OUT=${OUT:-bench/results/history-commits-$(date +%Y-%m-%d).md}

# shellcheck source=bench/lib.sh
. bench/lib.sh
release_build hubd
bench_work
disk_state
start_broker
printf '{"schemaVersion": 1, "broker": {"host": "127.0.0.1", "port": %s}, "sensors": []}\n' "$port" >"$state/defaults.json"
start_hubd "$state" ""
until [ -s "$state/history.sqlite" ]; do sleep 0.1; done
stop_hubd

{
    echo "# A commit to the history, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/history-commits.sh\` (history.sqlite made by a release hubd at $(git rev-parse --short HEAD), on"
    echo "$(df --output=fstype "$disk" | tail -1 | tr -d ' ') in \`$TMPDIR\`):"
    python3 bench/history-commits.py age "$state/history.sqlite" "$DAYS"
    size=$(stat -c %s "$state/history.sqlite")
    echo
    echo "Then 10 minutes of the same rows, committed at each interval; the pages SQLite appended to the write-ahead"
    echo "log (each written whole), and what that makes a day:"
    echo
    python3 bench/history-commits.py measure "$state/history.sqlite"
    echo
    echo "An experiment: the same again once the indexes that start with the sensor (which hubd's queries by sensor"
    echo "need) are replaced by ones that start with the time, which grow at their end:"
    echo
    python3 bench/history-commits.py by-time "$state/history.sqlite"
    echo
    echo "The rows themselves take about $(awk -v d="$DAYS" -v s="$size" 'BEGIN { printf "%.0f", s / d / 1e6 }') MB a day in the file; a checkpoint copies the"
    echo "pages the log holds into it once more. hubd commits every \`history.commit_interval\` (60 s by default)."
} | tee "$OUT"
