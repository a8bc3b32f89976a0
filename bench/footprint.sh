#!/usr/bin/env bash
# What a Raspberry Pi carries (issue 55), beside the goals: the Debian package's size and its installed size, the one
# executable's size (stripped, the Swift runtime inside), and the resident memory (RSS, of which anonymous) of that
# packaged hubd idle with SENSORS (1,000) sensors that have each had a status, the median of RUNS (3). The write
# budget and the CPU at a home's rate are bench/home.sh's; the dynamic release build's RSS is bench/hub.sh's (5 idle).
# Prints a Markdown report and writes it to OUT (bench/results/footprint-<date>.md). Builds the package
# (scripts/make-deb: a static release build in .build/static, about 25 minutes from nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

SENSORS=${SENSORS:-1000}
RUNS=${RUNS:-3}
OUT=${OUT:-bench/results/footprint-$(date +%Y-%m-%d).md}

# shellcheck source=bench/lib.sh
. bench/lib.sh
scripts/install-deps
deb=$(scripts/make-deb)
packaged=${deb%.deb}/usr/bin/hubd
[ -x "$packaged" ] || { echo "footprint: no hubd in the package's stage (${deb%.deb})" >&2; exit 1; }
mkdir -p .build/bench
gcc -O2 -o .build/bench/pubgen bench/pubgen.c -lmosquitto
bench_work
start_broker

# hubd ($2, called $1 here) idle with SENSORS sensors that have each had a status: RSS and anonymous, in MiB, once
# the registry has every status and the journal has handed its lines on (memory_rss, memory_anon); and of the RSS,
# the executable's code (memory_code) and what hubd touched of everything in 10 s idle (memory_touched: smaps'
# Referenced after clear_refs).
idle_memory() {
    local run rss="" anon="" code="" touched=""
    for run in $(seq "$RUNS"); do
        make_state "$work/$1-$run" "$SENSORS"
        hubd=$2 start_hubd "$work/$1-$run" ""
        .build/bench/pubgen 127.0.0.1 "$port" 'bench/s%d' "$SENSORS" "$SENSORS" 1 2 >/dev/null
        wait_metric sensorhub_messages_total "$SENSORS"
        wait_metric 'sensorhub_journal_unacknowledged{consumer="store"}' 0 -le
        sleep 5
        rss+=" $(rss_mib "$hub_pid")"; anon+=" $(anon_mib "$hub_pid")"
        code+=" $(awk -v exe="$(readlink -f "$2")" '/^[0-9a-f]+-[0-9a-f]+ / { in_code = ($6 == exe && $2 == "r-xp") }
            in_code && /^Rss:/ { kib += $2 } END { printf "%.1f", kib / 1024 }' "/proc/$hub_pid/smaps")"
        echo 1 >"/proc/$hub_pid/clear_refs"
        sleep 10
        touched+=" $(awk '/^Referenced:/ { kib += $2 } END { printf "%.1f", kib / 1024 }' "/proc/$hub_pid/smaps")"
        stop_hubd
    done
    memory_rss=$(median $rss) memory_anon=$(median $anon) memory_code=$(median $code)
    memory_touched=$(median $touched)
}

idle_memory static "$packaged"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
package_bytes=$(stat -c %s "$deb")
installed_kib=$(dpkg-deb -f "$deb" Installed-Size)
binary_bytes=$(stat -c %s "$packaged")
installed_mib=$(awk -v k="$installed_kib" 'BEGIN { printf "%.1f", k / 1024 }')
{
    echo "# What a Raspberry Pi carries, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/footprint.sh\` at $(git rev-parse --short HEAD) ($(dpkg --print-architecture)); RSS: hubd idle with $SENSORS sensors"
    echo "that have each had a status, the median of $RUNS runs."
    echo
    echo "| what | measured | goal (issue 55) |"
    echo "|---|---|---|"
    echo "| the package ($(basename "$deb")) | **$(mb "$package_bytes") MB** | $(goal "package ≤ 15 MB" "$(mb "$package_bytes")" "<=" 15 "≤ 15 MB") |"
    echo "| installed | **$installed_mib MiB** | $(goal "installed ≤ 50 MiB" "$installed_mib" "<=" 50 "≤ 50 MiB") |"
    echo "| the one executable (/usr/bin/hubd, hubctl a link to it) | $(mib "$binary_bytes") MiB | |"
    echo "| RSS of the packaged hubd, idle, $SENSORS sensors | **$memory_rss MiB** | $(goal "RSS at $SENSORS sensors ≤ 30 MiB" "$memory_rss" "<=" 30 "≤ 30 MiB") |"
    echo "| of which anonymous (hubd's own memory) | $memory_anon MiB | |"
    echo "| of which the executable's code, mapped from the page cache | $memory_code MiB | |"
    echo "| what hubd touched in 10 s idle (smaps Referenced, every mapping) | $memory_touched MiB | |"
    echo
    echo "The executable's largest parts (\`size -A\`, MiB):"
    echo
    echo '```'
    size -A "$packaged" | awk 'NR > 2 && $2 > 1048576 { printf "%-16s %6.1f\n", $1, $2 / 1048576 }' | sort -k2 -n -r
    echo '```'
    echo
    echo "CPU at a home's rate and the write budget: \`bench/home.sh\`."
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
} | tee "$OUT"
