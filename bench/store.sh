#!/usr/bin/env bash
# The registry at scale (issue 3): hubctl (release build) on stores of 1,000, 10,000 and 100,000 sensors —
# `sensors add` (read, check, write crash-safely), `sensors list --json`, `sensors list` and `sensors show`,
# median of ROUNDS runs each, with the store's size and hubctl's peak memory. Goal: add under 200 ms at 100,000.
# Prints a Markdown report and writes it to bench/results/store-<date>.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"1000 10000 100000"}
ROUNDS=${ROUNDS:-7}
OUT=${OUT:-bench/results/store-$(date +%Y-%m-%d).md}

scripts/install-deps
swift build -c release --product hubctl >&2
hubctl=$(swift build -c release --show-bin-path)/hubctl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A store of N sensors, half of them with a status, written directly (adding 100,000 one by one takes a while).
make_store() {
    mkdir -p "$1"
    awk -v n="$2" 'BEGIN {
        print "{\n  \"schemaVersion\": 1,\n  \"broker\": {\"host\": \"localhost\", \"port\": 1883, \"clientId\": \"sensorhub\"},\n  \"sensors\": ["
        for (i = 0; i < n; i++) {
            updated = (i % 2) ? "\"lastUpdated\": \"2026-11-22T10:05:00.000Z\", " : ""
            status = (i % 2) ? "open" : "Waiting"
            printf "    {\"name\": \"sensor %d\", \"topic\": \"home/sensor %d/status\", \"status\": \"%s\", %s\"added\": \"2026-11-22T10:00:00.000Z\", \"kind\": \"status\"}%s\n", i, i, status, updated, (i < n - 1) ? "," : ""
        }
        print "  ]\n}"
    }' >"$1/defaults.json"
}

# Median wall-clock milliseconds of ROUNDS runs of a command.
median_ms() {
    local times=()
    for _ in $(seq "$ROUNDS"); do
        local start end
        start=$(date +%s%N)
        "$@" >/dev/null
        end=$(date +%s%N)
        times+=($(((end - start) / 1000000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

peak_kb() {
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
    else
        echo "?"
    fi
}

rows=()
for size in $SIZES; do
    dir="$work/$size"
    make_store "$dir" "$size"
    counter=0
    add() { counter=$((counter + 1)); "$hubctl" sensors add "bench $counter" --state-dir "$dir"; }
    add_ms=$(median_ms add)
    list_json_ms=$(median_ms "$hubctl" sensors list --json --state-dir "$dir")
    list_ms=$(median_ms "$hubctl" sensors list --state-dir "$dir")
    show_ms=$(median_ms "$hubctl" sensors show "sensor 7" --state-dir "$dir")
    memory=$(peak_kb "$hubctl" sensors add "bench memory" --state-dir "$dir")
    bytes=$(stat -c %s "$dir/defaults.json")
    # The status log at its longest (a quarter of the document, at least 256 KiB: hubd folds it in before it grows
    # past that), which every reader replays over the document; then the add that folds it in.
    python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
sensors = json.load(open(d + "/defaults.json"))["sensors"]
limit = max(1 << 18, os.path.getsize(d + "/defaults.json") // 4)
lines, size, i = [], 0, 0
while True:
    s = sensors[i % len(sensors)]
    line = json.dumps({"topic": s["topic"], "sensor": s["id"], "status": "s%d" % i,
                       "updated": "2026-11-28T10:00:00.000Z", "seq": 1 + i // len(sensors)},
                      separators=(",", ":")) + "\n"
    if size + len(line) > limit:
        break
    lines.append(line)
    size += len(line)
    i += 1
open(d + "/defaults.statuses", "w").write("".join(lines))
PY
    log_lines=$(wc -l <"$dir/defaults.statuses")
    log_json_ms=$(median_ms "$hubctl" sensors list --json --state-dir "$dir")
    start=$(date +%s%N); "$hubctl" sensors add "bench fold" --state-dir "$dir" >/dev/null; end=$(date +%s%N)
    [ ! -s "$dir/defaults.statuses" ] || { echo "store: the add left the status log" >&2; exit 1; }
    rows+=("| $size | $((bytes / 1024)) KiB | $add_ms | $list_json_ms | $list_ms | $show_ms | $((memory / 1024)) MiB | $log_json_ms ms ($log_lines lines) | $(((end - start) / 1000000)) |")
    echo "$size sensors: add ${add_ms} ms, list --json ${list_json_ms} ms" >&2
done

{
    echo "# Registry at scale, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "hubctl (release build) on a store of N sensors; median of $ROUNDS runs, wall-clock milliseconds including"
    echo "process start. \`add\` reads the store, checks the name and topic against all others, and replaces the file"
    echo "(temporary file, fsync, rename, fsync of the directory). Command: \`bench/store.sh\`."
    echo
    echo "hubd appends statuses to \`defaults.statuses\`, which every reader replays: the last two columns are with"
    echo "that log at its longest (a quarter of the document, at least 256 KiB), then the add that folds it in (one run)."
    echo
    echo "| sensors | store size | add ms | list --json ms | list ms | show ms | add peak memory | list --json ms, status log at its longest | add ms, folding it in |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), file system $(df -T "$work" | awk 'NR == 2 { print $2 }');"
    echo "$(swift --version 2>/dev/null | head -1)."
} | tee "$OUT"
