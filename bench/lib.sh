# Helpers for bench/hub.sh (sourced, not run): reading a process's CPU and memory from /proc, waiting for a quiet
# machine before each measured burst, the median and spread of several runs, and goals checked from the figures.
# Whatever they record for the report goes to files under $work, so that helpers called in a subshell ($(…))
# still reach it.

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
    local port=$((20000 + RANDOM % 20000))
    while ! port_is_free "$port"; do port=$((20000 + RANDOM % 20000)); done
    echo "$port"
}
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
rss_mib() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# The process's own memory (heap and stacks), without the code and data pages of its binary and libraries.
anon_mib() { awk '/RssAnon/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
anon_kib() { awk '/RssAnon/ { print $2 }' "/proc/$1/status"; }
# utime + stime of every thread of the process, in clock ticks (CLK_TCK a second, 100 on Linux: 10 ms steps, so a
# burst's CPU is read to ±0.01 s).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Context switches so far, voluntary and not, by thread: "tid name switches" a line (a thread's name is what it set,
# or else its creator's).
switches_by_thread() {
    local task
    for task in /proc/"$1"/task/*; do
        awk -v tid="${task##*/}" -v name="$(tr ' ' _ <"$task/comm" 2>/dev/null)" \
            '/voluntary_ctxt_switches/ { n += $2 } END { print tid, name, n + 0 }' "$task/status" 2>/dev/null || true
    done
}
# The same summed over the process's threads.
switches() { switches_by_thread "$1" | awk '{ n += $3 } END { print n + 0 }'; }
# What switches_by_thread said before ($1) and after ($2), summed by thread name, per notification ($3): where the
# hand-offs are.
switches_by_name() {
    awk -v n="$3" 'FNR == NR { before[$1] = $3; next } { by[$2] += $3 - before[$1] }
        END { for (k in by) if (by[k] > 0) printf "  %-24s %8.2f\n", k, (n > 0 ? by[k] / n : 0) }' "$1" "$2" | sort -k2 -gr
}
TICK=$(getconf CLK_TCK)
seconds_of_ticks() { awk -v t="$1" -v hz="$TICK" 'BEGIN { printf "%.2f", t / hz }'; }
ratio() { printf '%.2f' "$(echo "scale=4; $1 / $2" | bc)"; }
per_second() { echo "scale=0; $1 / $2" | bc; }

# --- Quiet before each burst -------------------------------------------------------------------------------------
# Other builds and profilers share the machine: a burst measured beside them is slower by an amount no median
# removes. So before each burst the bench samples /proc/stat over 2 s and waits (up to QUIET_WAIT s) until the
# cores are less than QUIET_BUSY % busy, not counting the bench's own processes (the broker, and the hubd or
# mqttwarn idling before its burst: their ticks are taken out). A burst that never got quiet is measured anyway
# and named in the report's warning, so a noisy run says so.
QUIET_BUSY=${QUIET_BUSY:-10}
QUIET_WAIT=${QUIET_WAIT:-60}
# The ticks of the bench's own processes still alive (pids, the array hub.sh keeps for its clean-up).
own_ticks() {
    local pid
    for pid in "${pids[@]}"; do cat "/proc/$pid/stat" 2>/dev/null || true; done | awk '{ n += $14 + $15 } END { print n + 0 }'
}
# All cores' busy and total ticks (user nice system irq softirq steal; idle and iowait are not busy).
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
busy_percent() { # over a 2 s sample, in % of all cores, less the bench's own processes
    local b0 t0 o0 b1 t1 o1
    read -r b0 t0 <<<"$(machine_ticks)"; o0=$(own_ticks)
    sleep 2
    read -r b1 t1 <<<"$(machine_ticks)"; o1=$(own_ticks)
    awk -v b=$((b1 - b0 - (o1 - o0))) -v t=$((t1 - t0)) 'BEGIN { p = t ? b * 100 / t : 0; printf "%.1f", (p < 0 ? 0 : p) }'
}
wait_quiet() { # what is about to be measured (for the warning)
    local start=$SECONDS busy
    while :; do
        busy=$(busy_percent)
        if awk -v b="$busy" -v q="$QUIET_BUSY" 'BEGIN { exit !(b < q) }'; then break; fi
        if ((SECONDS - start >= QUIET_WAIT)); then
            echo "$1|$busy" >>"$work/warnings"
            echo "bench: $1: still $busy % busy after ${QUIET_WAIT} s, measuring anyway" >&2
            break
        fi
        echo "bench: $1: $busy % busy besides the bench, waiting" >&2
    done
    echo "$busy" >>"$work/quiet"
}

# --- Several runs ------------------------------------------------------------------------------------------------
# stats V… → "median min max dev": dev is the largest distance of a run from the median, in % of the median, so
# "±4 %" means every run was within 4 % of the figure shown.
stats() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        d = m - v[1]; if (v[NR] - m > d) d = v[NR] - m
        printf "%s %s %s %.1f\n", m, v[1], v[NR], (m ? d * 100 / m : 0) }'
}
median() { stats "$@" | cut -d' ' -f1; }
# spread FORMAT UNIT V… → "7.49 s (7.40–7.60, ±1.3 %)": the median, then the runs' range and largest deviation.
spread() {
    local fmt=$1 unit=$2 m lo hi dev; shift 2
    read -r m lo hi dev <<<"$(stats "$@")"
    if [ $# -eq 1 ]; then
        printf "$fmt%s" "$m" "$unit"
    else
        printf "$fmt%s ($fmt–$fmt, ±%s %%)" "$m" "$unit" "$lo" "$hi" "$dev"
    fi
}
# run_ratios "A…" "B…" → "a–b", the range of A_i / B_i over runs paired by their index (the same run of both), so
# a ratio of medians can be read beside how far each run's own ratio strayed. Empty with one run.
run_ratios() {
    local -a a=($1) b=($2)
    [ ${#a[@]} -gt 1 ] && [ ${#a[@]} -eq ${#b[@]} ] || return 0
    local i out=()
    for i in "${!a[@]}"; do out+=("$(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { print (y ? x / y : 0) }')"); done
    read -r _ lo hi _ <<<"$(stats "${out[@]}")"
    printf 'runs %.2f–%.2f' "$lo" "$hi"
}
# CPU µs for each of COUNT messages, from CPU seconds.
us_each() { awk -v s="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", s * 1e6 / n; else printf "–" }'; }

# --- Goals -------------------------------------------------------------------------------------------------------
# goal NAME VALUE OP TARGET TEXT → the row's goal cell, "TEXT ✓" or "TEXT ✗", computed from VALUE OP TARGET
# (OP <= or >=); also a line of the report's summary of goals.
goal() {
    local mark
    mark=$(awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { ok = (op == "<=") ? (v + 0 <= t + 0) : (v + 0 >= t + 0); printf "%s", (ok ? "✓" : "✗") }')
    echo "| $1 | $5 | $2 | $mark |" >>"$work/goals"
    printf '%s %s' "$5" "$mark"
}
# A goal this report could not check (its section or scale not run), so the summary says so rather than omit it.
goal_not_run() { echo "| $1 | $2 | not run ($3) | – |" >>"$work/goals"; }

# fsync_times DIR N → "p50 p99 max" in ms: N appends of 200 bytes to a file in DIR, each followed by fsync (the journal's
# and the outbox's pattern), on whatever disk DIR is on.
fsync_times() {
    python3 - "$1" "$2" <<'PY'
import os, sys, time
path = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    os.write(fd, b"x" * 199 + b"\n")
    os.fsync(fd)
    times.append((time.perf_counter() - start) * 1000)
os.close(fd)
os.unlink(path)
times.sort()
print("%.3f %.3f %.3f" % (times[len(times) // 2], times[int(len(times) * 0.99)], times[-1]))
PY
}

# --- The broker ----------------------------------------------------------------------------------------------------
# start_broker: a Mosquitto on a free port ($port) for the bench, its config and log in $work, its pid in pids: no
# persistence, no limit on a client's queue; $mosquitto is its program.
start_broker() {
    port=$(free_port)
    cat >"$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 0
# Without it the broker's Nagle delays add 10-20 ms to every hop at 1k msg/s, for hubd and mqttwarn alike.
set_tcp_nodelay true
user $(id -un)
CONF
    mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
    "$mosquitto" -c "$work/mosquitto.conf" >"$work/broker.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do port_is_free "$port" || break; sleep 0.05; done
}

# --- hubd ----------------------------------------------------------------------------------------------------------
# A state directory with N sensors s0…s(N-1) on bench/s<i>, pointed at the broker.
make_state() {
    mkdir -p "$1"
    # A client id of its own: a persistent session left by an earlier run must not replay its queue into this one.
    awk -v n="$2" -v port="$port" -v id="bench-$(basename "$1")-$$" 'BEGIN {
        print "{\n  \"schemaVersion\": 1,\n  \"broker\": {\"host\": \"127.0.0.1\", \"port\": " port ", \"clientId\": \"" id "\"},\n  \"sensors\": ["
        for (i = 0; i < n; i++) printf "    {\"name\": \"s%d\", \"topic\": \"bench/s%d\", \"status\": \"Waiting\", \"added\": \"2026-11-22T10:00:00.000Z\", \"kind\": \"status\"}%s\n", i, i, (i < n - 1) ? "," : ""
        print "  ]\n}"
    }' >"$1/defaults.json"
}

# Every request to hubd needs an identity (issue 51): the bench's hubd opens /metrics (http.public, as a Prometheus
# on the LAN would have it) and takes this admin token for the API (`api_get`).
BENCH_TOKEN=${BENCH_TOKEN:-bench-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')}
BENCH_HTTP="http: {listen: \"127.0.0.1:0\", public: [/metrics], token: $BENCH_TOKEN}"
api_get() { curl -s -H "Authorization: Bearer $BENCH_TOKEN" "$@"; }

# Starts hubd ($hubd, else $bin/hubd) on state directory $1 with configuration $2 (YAML, http (BENCH_HTTP) and
# HUBD_YAML added) and waits until it has subscribed; sets hub_pid, hub_http and hub_ready (seconds from start to
# subscribed).
start_hubd() {
    local state=$1
    printf '%s\n%s\n%s\n' "$2" "${HUBD_YAML:-}" "$BENCH_HTTP" >"$state/hubd.yaml"
    local t0; t0=$(now)
    : >"$state/hubd.log"  # made now, so the wait below does not grep a file the child has yet to open
    # Notice: the ready line, and not a line per status change (that would be measured too).
    HUB_STATE_DIR=$state "${hubd:-$bin/hubd}" --config "$state/hubd.yaml" --log-level notice 2>"$state/hubd.log" &
    hub_pid=$!
    pids+=("$hub_pid")
    until grep -q "\] ready$" "$state/hubd.log"; do
        kill -0 "$hub_pid" || { cat "$state/hubd.log" >&2; exit 1; }
        sleep 0.02
    done
    hub_ready=$(elapsed "$t0")
    until grep -q 'address=127.0.0.1:[0-9]*' "$state/hubd.log"; do sleep 0.02; done
    hub_http=$(grep -o 'address=127.0.0.1:[0-9]*' "$state/hubd.log" | head -1 | cut -d: -f2)
}
stop_hubd() { kill "$hub_pid" 2>/dev/null || true; wait "$hub_pid" 2>/dev/null || true; }
metric() { curl -s "http://127.0.0.1:$hub_http/metrics" | awk -v name="$1" '$1 == name { print $2 }'; }
# A lost message would otherwise hang the benchmark: give up after WAIT_LIMIT seconds, saying what was missing.
WAIT_LIMIT=${WAIT_LIMIT:-300}
wait_metric() { # name, target[, -le: until it falls to the target instead]
    local start=$SECONDS
    until [ "$(metric "$1" | cut -d. -f1)" "${3:--ge}" "$2" ] 2>/dev/null; do
        ((SECONDS - start < WAIT_LIMIT)) || { echo "bench: $1 reached $(metric "$1") of $2 in ${WAIT_LIMIT}s" >&2; exit 1; }
        sleep 0.02
    done
}
wait_lines() { # file, count
    local start=$SECONDS
    until [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ]; do
        ((SECONDS - start < WAIT_LIMIT)) || { echo "bench: $1 has $(wc -l <"$1") of $2 lines in ${WAIT_LIMIT}s" >&2; exit 1; }
        sleep 0.02
    done
}

# --- what the bench runs --------------------------------------------------------------------------------------------
# release_build PRODUCT…: what the benches need installed (scripts/install-deps), then each product's release build;
# sets $bin to where they are.
release_build() {
    scripts/install-deps
    local product
    for product in "$@"; do swift build -c release --product "$product" >&2; done
    bin=$(swift build -c release --show-bin-path)
}

# A state directory for hubd on a disk (BENCH_TMPDIR, /var/tmp: on tmpfs /proc/<pid>/io's write_bytes reads 0),
# removed at exit with $work: $state, in $disk. After bench_work.
disk_state() {
    export TMPDIR=${BENCH_TMPDIR:-/var/tmp}
    disk=$(mktemp -d)  # removed at exit with $work
    state=$disk/hub
    mkdir -p "$state"
}

# --- the bench's own folder ------------------------------------------------------------------------------------------
# Makes $work (a temporary folder), $pids (processes to stop at the end) and the files goals, warnings and quiet in it;
# at exit every process in $pids is stopped and $work (and $shm and $disk, when a bench made them) is removed.
bench_work() {
    work=$(mktemp -d)
    pids=()
    trap bench_cleanup EXIT
    touch "$work/goals" "$work/warnings" "$work/quiet"
}
bench_cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work" "${shm:-}" "${disk:-}"
}
