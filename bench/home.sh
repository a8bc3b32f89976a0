#!/usr/bin/env bash
# What a home's hub writes to its disk (issues 54 and 55: an SD card wears out): a release hubd with hubd's defaults
# (history on, holding AGE_DAYS (7) days of the same rows) and HOME_SENSORS (20) sensors publishing 4 messages a
# second between them, each every 5 s — half doors whose every message is a change (open, closed, …: the worst a
# home does), half thermometers (JSON, a value each time) — with one alerting rule on the doors to a file backend
# and a webhook (a local receiver answering 200).
# Over SECS seconds untraced (hubd's CPU, and what reached the disk), then SECS more under strace. hubd commits the
# history hourly (or at 10,000 rows: every 42 minutes at this rate), longer than a window: each window ends with its
# rows committed (SIGUSR1, as hubctl asks), so SECS (1800) sets how often the history commits, and the history's
# share is an upper bound on a day's. INTERVAL=300: with `history.commit_interval` that many seconds, and each window
# (SECS, 300 then, a multiple of INTERVAL) from just after one of the history's own commits to just after another,
# so it holds the commits a day holds (a window ending in a commit asked for would hold two):
# - the bytes it asked to write (write, pwrite64, writev) and the fsyncs (fsync, fdatasync), by file, from
#   `strace -f -y` (a file written through a temporary name and renamed counts under its own name);
# - what reached the block layer (/proc/<pid>/io write_bytes: whole pages, the fsyncs' blocks), and the same by file:
#   each page hubd dirties, from perf (writeback:writeback_dirty_folio), the filesystem's own blocks among them;
# then a day of it (× 86,400 / the window's length) and per notification.
# Prints a Markdown report and writes it to OUT (bench/results/home-<date>.md). BENCH_TMPDIR (/var/tmp): where the
# state directory lives (a disk, not tmpfs, or write_bytes reads 0). KEEP_STATE=DIR: the state directory is copied
# there at the end, to see what each file holds. LOW_WEAR=1: with `state.low_wear` (the journal and the logs in the
# runtime directory, a tmpfs here as under the unit). HOME_YAML: more of hubd's configuration, e.g.
# `HOME_YAML='sensors: { sync_delay: 5s }'` for an A/B of a setting. PI_DISK=1 (root; the default where root can
# loop-mount, PI_DISK=0 to run on BENCH_TMPDIR itself): the state directory on a disk of its own, made and mounted as
# Raspberry Pi OS makes its SD card's root (ext4 with its journal, `defaults,noatime`; PI_MOUNT for other options,
# e.g. `noatime,lazytime`), a loop-mounted image in BENCH_TMPDIR; the report then says what the device itself was
# written, the filesystem's journal and its metadata included, which hubd's counters do not see. TIMERS=1 (root): the
# timers that wake hubd at this rate instead (`bench/timers.sh`).
set -euo pipefail
cd "$(dirname "$0")/.."

HOME_SENSORS=${HOME_SENSORS:-20}
INTERVAL=${INTERVAL:-}
SECS=${SECS:-$([ -n "$INTERVAL" ] && echo 300 || echo 1800)}
RATE=${RATE:-4}
OUT=${OUT:-bench/results/home-$(date +%Y-%m-%d).md}
# Windows aligned to the history's commits when INTERVAL says how often they come.
aligned=$([ -n "$INTERVAL" ] && echo 1 || echo 0)
if [ "$aligned" = 1 ] && { [ "$INTERVAL" -lt 60 ] || [ $((SECS % INTERVAL)) != 0 ]; }; then
    echo "home: SECS ($SECS) must be a multiple of INTERVAL ($INTERVAL, at least 60), the history's commit interval" >&2
    exit 2
fi

# shellcheck source=bench/lib.sh
. bench/lib.sh
# The commit the build is of (the report is written at the end, when HEAD may have moved on).
built_at=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo "+changes")
release_build hubd
command -v strace >/dev/null || { sudo -n apt-get install -y strace >&2 || apt-get install -y strace >&2; }
bench_work
pi_image="" pi_mount="" pi_device=""
if [ -z "${PI_DISK:-}" ]; then
    PI_DISK=$([ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null && [ -e /dev/loop-control ] && echo 1 || echo 0)
fi
if [ "$PI_DISK" = 1 ]; then
    pi_image=$(mktemp "${BENCH_TMPDIR:-/var/tmp}/pi-disk.XXXXXX")
    truncate -s 2G "$pi_image"
    mkfs.ext4 -q -F "$pi_image"
    pi_mount=$(mktemp -d)
    mount -o "loop,${PI_MOUNT:-defaults,noatime}" "$pi_image" "$pi_mount"
    pi_device=$(basename "$(findmnt -no SOURCE --target "$pi_mount")")
    export BENCH_TMPDIR=$pi_mount
    # After bench_cleanup has removed the state directory in it (umount detaches the loop device).
    trap 'bench_cleanup; umount "$pi_mount"; rmdir "$pi_mount"; rm -f "$pi_image"' EXIT
fi
# What the device the state directory is on was written so far, in bytes (PI_DISK only: a device of its own).
# Sectors written, times 512 in bash: mawk prints a product past 2^31 as 2.66712e+09.
device_written() {
    if [ -n "$pi_device" ]; then echo $(($(awk '{ print $7 }' "/sys/block/$pi_device/stat") * 512)); else echo 0; fi
}
disk_state
start_broker
doors=$((HOME_SENSORS / 2))
awk -v n="$HOME_SENSORS" -v doors="$doors" -v port="$port" -v id="bench-home-$$" 'BEGIN {
    print "{\n  \"schemaVersion\": 1,\n  \"broker\": {\"host\": \"127.0.0.1\", \"port\": " port ", \"clientId\": \"" id "\"},\n  \"sensors\": ["
    for (i = 0; i < n; i++) {
        if (i < doors) printf "    {\"name\": \"door%d\", \"topic\": \"home/door%d\", \"status\": \"Waiting\", \"added\": \"2026-12-06T10:00:00.000Z\", \"kind\": \"status\"}", i, i
        else printf "    {\"name\": \"temp%d\", \"topic\": \"home/temp%d\", \"status\": \"Waiting\", \"added\": \"2026-12-06T10:00:00.000Z\", \"kind\": \"numeric\", \"value\": \"temperature\", \"unit\": \"°C\"}", i, i
        printf "%s\n", (i < n - 1) ? "," : ""
    }
    print "  ]\n}"
}' >"$state/defaults.json"

# The webhook's receiver: 200 to every POST.
hook=$(free_port)
python3 - "$hook" >/dev/null 2>&1 <<'PY' &
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
HTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
PY
pids+=($!)

config=$(cat <<YAML
notifiers:
  backends:
    log: { type: file, path: $state/delivered.jsonl }
    hook: { type: webhook, url: "http://127.0.0.1:$hook/hook" }
  rules:
    doors:
      sensors: ["door*"]
      events: [changed]
      statuses: [open]
      backends: [log, hook]
      group_by: [sensor]
      group_wait: 0s
YAML
)
# LOW_WEAR=1: hubd's low-wear setting (state.low_wear).
if [ "${LOW_WEAR:-0}" = 1 ]; then config+=$'\nstate: { low_wear: true }'; fi
if [ -n "$INTERVAL" ]; then config+=$'\n'"history: { commit_interval: ${INTERVAL}s }"; fi
# HOME_YAML: more of hubd's configuration (a top-level key the above does not set), to measure a setting.
if [ -n "${HOME_YAML:-}" ]; then config+=$'\n'"$HOME_YAML"; fi
# As the systemd unit runs it: RuntimeDirectory= (a tmpfs) for the status file, and the logs in low wear.
shm=$(mktemp -d /dev/shm/bench-home.XXXXXX)
export RUNTIME_DIRECTORY=$shm
# A history a week old (AGE_DAYS), as a hub that has run for a while has: an empty one's indexes fit on a page or
# two, and its commits write a fraction of what they do once each sensor's rows have leaves of their own.
if [ "${AGE_DAYS:-7}" != 0 ]; then
    start_hubd "$state" "$config"
    stop_hubd
    python3 bench/history-commits.py age "$state/history.sqlite" "${AGE_DAYS:-7}" >&2
fi
start_hubd "$state" "$config"

# The publisher: RATE messages a second in turn over the sensors, QoS 1 and retained as firmware publishes, for
# 2 × SECS seconds, INTERVAL and two minutes (the wait for the history's first commit, the untraced window, then the
# traced one; it is stopped with the hub); it prints when the first begins and the last ends.
publisher_log=$work/publisher.log
python3 - "$port" "$HOME_SENSORS" "$doors" "$RATE" $((${INTERVAL:-0} + 2 * SECS + 120)) >"$publisher_log" <<'PY' &
import socket, struct, sys, time
port, count, doors, rate, secs = (int(a) for a in sys.argv[1:6])
def packet(kind, body):
    n, length = len(body), b""
    while True:
        byte, n = n % 128, n // 128
        length += bytes([byte | (128 if n else 0)])
        if not n: break
    return bytes([kind]) + length + body
def text(s): b = s.encode(); return struct.pack(">H", len(b)) + b
s = socket.create_connection(("127.0.0.1", port))
s.sendall(packet(0x10, text("MQTT") + bytes([4, 2]) + struct.pack(">H", 60) + text("bench-home")))
s.recv(4)
s.setblocking(False)
warm = 5
start, i, packet_id = time.monotonic(), 0, 1
print("begin", time.time() + warm, flush=True)
while time.monotonic() - start < secs + warm:
    sensor = i % count
    if sensor < doors:
        topic, payload = f"home/door{sensor}", (b"open" if (i // count) % 2 == 0 else b"closed")
    else:
        topic, payload = f"home/temp{sensor}", ('{"temperature": %.1f}' % (20 + (i % 17) / 10)).encode()
    s.sendall(packet(0x33, text(topic) + struct.pack(">H", packet_id) + payload))
    packet_id = packet_id % 65535 + 1
    try:
        while s.recv(4096): pass
    except BlockingIOError: pass
    i += 1
    time.sleep(max(0, start + i / rate - time.monotonic()))
print("end", time.time(), i, flush=True)
s.setblocking(True)
s.sendall(bytes([0xe0, 0]))
PY
publisher=$!
pids+=("$publisher")
until grep -q '^begin' "$publisher_log"; do sleep 0.1; done
begin=$(awk '/^begin/ { print $2 }' "$publisher_log")
sleep "$(echo "$begin - $(date +%s.%N)" | bc)"
# TIMERS=1: which of hubd's sleeping functions set the timers that wake it at this rate, over TIMERS_SECS (60) from
# TIMERS_AFTER (60) seconds after the load began (the first minute has timers of its own), then the bench stops.
if [ "${TIMERS:-0}" = 1 ]; then
    sleep "${TIMERS_AFTER:-60}"
    bench/timers.sh "$hub_pid" "${TIMERS_SECS:-60}"
    exit 0
fi

io() { awk -v key="$1" '$1 == key ":" { print $2 }' "/proc/$hub_pid/io"; }
# Each window starts and ends with the history committed (SIGUSR1, as hubctl asks: WriteRequest), so it holds
# the commits of its own rows, whether or not the history's timer (history.commit_interval, 5 min) fell in it. The
# request has hubd write the registry's statuses and the alert book too: one write of each more a window.
commit_history() {
    local before; before=$(awk '{ print $2 }' "$state/hubd.answered")
    kill -USR1 "$hub_pid"
    for _ in $(seq 200); do
        [ "$(awk '{ print $2 }' "$state/hubd.answered")" != "$before" ] && return
        sleep 0.05
    done
    echo "home: hubd did not answer SIGUSR1 (hubd.answered) in 10 s" >&2
    exit 1
}
# Waits for the history's next commit (its log's modification time moves; nothing else writes it), and a second more
# for the commit to end.
wal_time() { stat -c %.9Y "$state/history.sqlite-wal" 2>/dev/null || echo 0; }
next_commit() {
    local before; before=$(wal_time)
    for _ in $(seq $(((INTERVAL + 150) * 20))); do
        [ "$(wal_time)" != "$before" ] && { sleep 1; return; }
        sleep 0.05
    done
    echo "home: the history did not commit in $((INTERVAL + 150)) s" >&2
    exit 1
}
# A window's edge: just after the history's own commit (INTERVAL), or its rows committed at once.
edge() { if [ "$aligned" = 1 ]; then next_commit; else commit_history; fi; }
# A window: SECS, ending at the edge (aligned: SECS / INTERVAL of the history's commits on, a little past SECS).
window() {
    if [ "$aligned" = 1 ]; then
        for _ in $(seq $((SECS / INTERVAL))); do
            sleep $((INTERVAL - 30))
            next_commit
        done
    else
        sleep "$SECS"
        commit_history
    fi
}
now() { date +%s.%N; }
# The first window, untraced: hubd's CPU and what reached the disk as it runs by itself.
edge
plain_bytes0=$(io write_bytes); plain_cancelled0=$(io cancelled_write_bytes); plain_cpu0=$(cpu_ticks "$hub_pid")
plain_device0=$(device_written)
plain_t0=$(now)
window
plain_bytes1=$(io write_bytes); plain_cancelled1=$(io cancelled_write_bytes); plain_cpu1=$(cpu_ticks "$hub_pid")
plain_device1=$(device_written)
plain_t1=$(now)
# The second: strace on every thread of hubd, its io counters before and after.
bytes0=$(io write_bytes); cancelled0=$(io cancelled_write_bytes); wchar0=$(io wchar); cpu0=$(cpu_ticks "$hub_pid")
device0=$(device_written)
messages0=$(metric sensorhub_messages_total | cut -d. -f1)
delivered0=$(wc -l <"$state/delivered.jsonl" 2>/dev/null || echo 0)
strace -f -y -qq -e trace=write,pwrite64,writev,fsync,fdatasync -p "$hub_pid" -o "$work/strace" &
tracer=$!
pids+=("$tracer")
# And each page hubd dirties (what write_bytes counts, a page each: writeback:writeback_dirty_folio), by inode, with
# which file each inode was (read every 2 s: a file replaced atomically gets a new one). The filesystem's own blocks
# (inodes, bitmaps, directories) are dirtied through the block device's inode.
pages=0
if command -v perf >/dev/null && grep -q 'writeback:writeback_dirty_folio' <<<"$(perf list 2>/dev/null)"; then
    perf record -q -a -e writeback:writeback_dirty_folio -o "$work/pages.data" 2>/dev/null &
    pages=$!
    pids+=("$pages")
    (while :; do stat -c '%i %n' "$state"/* "$state"/.[!.]* 2>/dev/null || true; sleep 2; done) >"$work/inodes" &
    inodes=$!
    pids+=("$inodes")
fi
t0=$(now)
window
kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true
if [ "$pages" != 0 ]; then
    kill -INT "$pages"; wait "$pages" 2>/dev/null || true
    kill "$inodes" 2>/dev/null || true; wait "$inodes" 2>/dev/null || true
fi
t1=$(now)
bytes1=$(io write_bytes); cancelled1=$(io cancelled_write_bytes); wchar1=$(io wchar); cpu1=$(cpu_ticks "$hub_pid")
device1=$(device_written)
messages1=$(metric sensorhub_messages_total | cut -d. -f1)
delivered1=$(wc -l <"$state/delivered.jsonl")
kill "$publisher" 2>/dev/null || true
stop_hubd
[ -z "${KEEP_STATE:-}" ] || { mkdir -p "$KEEP_STATE" && cp -r "$state"/. "$KEEP_STATE"/; }

messages=$((messages1 - messages0))
notifications=$((delivered1 - delivered0))
# Bytes and fsyncs by file (bench/home-files.py: a temporary name counts as the file it becomes).
by_file=$(python3 bench/home-files.py strace "$work/strace" "$state")

# Pages hubd dirtied, by file: `hubd 123/124 … writeback_dirty_folio: bdi 254:0: ino=6725696 index=0`.
by_page=""
if [ "$pages" != 0 ] && [ -s "$work/pages.data" ]; then
    perf script -i "$work/pages.data" -F pid,trace >"$work/pages.txt" 2>/dev/null
    by_page=$(python3 bench/home-files.py pages "$work/pages.txt" "$work/inodes" "$disk" "$hub_pid")
fi

# A day of each window, by how long it really ran.
traced_secs=$(echo "$t1 - $t0" | bc -l); plain_secs=$(echo "$plain_t1 - $plain_t0" | bc -l)
day=$(echo "86400 / $traced_secs" | bc -l); plain_day=$(echo "86400 / $plain_secs" | bc -l)
mb() { awk -v b="$1" -v d="${2:-$day}" 'BEGIN { printf "%.1f", b * d / 1e6 }'; }
perday() { awk -v n="$1" -v d="$day" 'BEGIN { printf "%.0f", n * d }'; }
each() { awk -v n="$1" -v m="$2" 'BEGIN { if (m > 0) printf "%.2f", n / m; else printf "–" }'; }
percent() { awk -v t="$1" -v hz="$TICK" -v s="$2" 'BEGIN { printf "%.2f", t / hz / s * 100 }'; }
secs() { printf "%.0f" "$1"; }
asked=0; syncs=0
{
    echo "# A home's writes, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/home.sh\` (release hubd at $built_at, state on $(df --output=fstype "$disk" | tail -1 | tr -d ' ') in \`$TMPDIR\`):"
    echo "$HOME_SENSORS sensors ($doors doors whose every message is a change, $((HOME_SENSORS - doors)) thermometers), $RATE messages a"
    echo "second, QoS 1 retained; history on (hubd's default, aged ${AGE_DAYS:-7} days); one alerting rule on the doors to a file and a webhook."
    echo "Measured over $(secs "$traced_secs") s: $messages messages, $notifications notifications in the file (the webhook gets as many)."
    [ -z "${HOME_YAML:-}" ] || echo "hubd's configuration adds \`$HOME_YAML\` (HOME_YAML)."
    if [ "$aligned" = 1 ]; then
        echo "\`history.commit_interval: ${INTERVAL}s\`; each window runs from just after one of the history's own commits to just after another."
    else
        echo "Each window ends with its rows committed to the history (one commit a window, where a day has one every 42 minutes at this rate): an upper bound on its share."
    fi
    echo "The runtime directory (as the unit's RuntimeDirectory=, a tmpfs: the status file$([ "${LOW_WEAR:-0}" = 1 ] && echo ", and in low wear (\`state.low_wear\`) the journal and the logs")) is in memory, and left out of the table."
    echo
    echo "| file | bytes asked to write | a day | writes | fsyncs | fsyncs a day | pages dirtied, a day |"
    echo "|---|---|---|---|---|---|---|"
    reached() { awk -v n="$1" '$1 == n { print $2 }' <<<"$by_page"; }
    while read -r name b c s; do
        [ -n "$name" ] || continue
        r=$(reached "$name")
        echo "| $name | $b | $(mb "$b") MB | $c | $s | $(perday "$s") | $([ -n "$by_page" ] && echo "$(mb "${r:-0}") MB" || echo –) |"
    done <<<"$by_file"
    # What only the pages show: the filesystem's own blocks, SQLite's shared memory, a checkpoint.
    while read -r name r; do
        [ -n "$name" ] && ! awk -v n="$name" '$1 == n { found = 1 } END { exit !found }' <<<"$by_file" || continue
        echo "| $name | – | – | – | – | – | $(mb "$r") MB |"
    done <<<"$by_page"
    asked=$(awk '{ n += $2 } END { print n + 0 }' <<<"$by_file")
    syncs=$(awk '{ n += $4 } END { print n + 0 }' <<<"$by_file")
    dirtied=$(awk '{ n += $2 } END { print n + 0 }' <<<"$by_page")
    echo "| **all** | $asked | **$(mb "$asked") MB** | | $syncs | $(perday "$syncs") | $([ -n "$by_page" ] && echo "**$(mb "$dirtied") MB**" || echo –) |"
    [ -n "$by_page" ] || echo "(No pages by file: perf, or its writeback:writeback_dirty_folio event, is not there.)"
    echo
    echo "- Reached the block layer (write_bytes, whole pages): $((bytes1 - bytes0)) bytes, **$(mb $((bytes1 - bytes0))) MB a day**;"
    echo "  of which cancelled (cancelled_write_bytes: a file replaced or cut before its pages were written back):"
    echo "  $((cancelled1 - cancelled0)) bytes, so $(mb $((bytes1 - bytes0 - cancelled1 + cancelled0))) MB a day left for the disk;"
    echo "  asked of the kernel in all (wchar, sockets included): $((wchar1 - wchar0)) bytes."
    echo "- Per message: $(each "$asked" "$messages") bytes asked, $(each $((bytes1 - bytes0)) "$messages") bytes to the disk,"
    echo "  $(each "$syncs" "$messages") fsyncs; per notification: $(each "$syncs" "$notifications") fsyncs."
    echo "- Untraced, the $(secs "$plain_secs") s before: $((plain_bytes1 - plain_bytes0 - plain_cancelled1 + plain_cancelled0)) bytes reached the disk, **$(mb $((plain_bytes1 - plain_bytes0 - plain_cancelled1 + plain_cancelled0)) "$plain_day") MB a day**;"
    echo "  hubd's CPU $(seconds_of_ticks $((plain_cpu1 - plain_cpu0))) s, **$(percent $((plain_cpu1 - plain_cpu0)) "$plain_secs") % of a core** ($(percent $((cpu1 - cpu0)) "$traced_secs") % with strace attached)."
    if [ -n "$pi_device" ]; then
        echo "- **The device itself** (PI_DISK: ext4 with its journal, mounted \`$(findmnt -no OPTIONS --target "$pi_mount")\`)"
        echo "  was written $((device1 - device0)) bytes, **$(mb $((device1 - device0))) MB a day** ($(mb $((plain_device1 - plain_device0)) "$plain_day") MB untraced):"
        echo "  hubd's pages, and what the filesystem writes for them besides (its journal, each metadata block in it first)."
    else
        echo "- On the machine's own disk (PI_DISK=0): what its filesystem writes for hubd's files besides their pages (its"
        echo "  journal, if it has one) is not counted; on a Pi's card that is about twice hubd's own (PI_DISK=1 counts it)."
    fi
    wal=$(awk '$1 == "history.sqlite-wal" { print $2 }' <<<"$by_file")
    if [ -n "$wal" ] && ! grep -q '^history.sqlite ' <<<"$by_file"; then
        echo "- SQLite's checkpoint (the log's pages written into history.sqlite, every 1,000 pages of log) did not fall in"
        echo "  the window: it writes each page of the log at most once more, so at most $(mb "$wal") MB a day more."
    fi
    echo "- Goals (issue 55): ≤ 300 MB a day by default, ≤ 30 MB a day in a low-wear setting; CPU ≤ 0.2 % of a core."
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
} | tee "$OUT"
