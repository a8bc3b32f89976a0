#!/usr/bin/env bash
# The cost of an identity (issue 51): GET /api/v1/sensors on a release hubd with SENSORS (20, a home) sensors,
# REQUESTS (5000) times over one kept-alive connection, each way in turn, ROUNDS (5) rounds: with no identity (the
# route opened with http.public, what every read was before), an API token (`hubctl tokens add`: a lookup by id and
# a SHA-256), a person's session cookie (a login: the same, and the session's use noted at most once an hour), and
# http.token (a SHA-256 compare). Beside hubd's CPU a request (from /proc, over exactly each run) is the wall time a
# request, the client included; one login's time (argon2id, m = 19 MiB, t = 2) is measured too.
# Prints a Markdown report and writes it to OUT (bench/results/auth-<date>.md).
set -euo pipefail
cd "$(dirname "$0")/.."

SENSORS=${SENSORS:-20}
REQUESTS=${REQUESTS:-5000}
ROUNDS=${ROUNDS:-5}
OUT=${OUT:-bench/results/auth-$(date +%Y-%m-%d).md}

# shellcheck source=bench/lib.sh
. bench/lib.sh
release_build hubd hubctl
bench_work

start_broker
state=$work/hub
make_state "$state" "$SENSORS"
password="bench pass phrase 42"
HUB_STATE_DIR=$state "$bin/hubctl" users add ana --role viewer --password-file - <<<"$password" >/dev/null
token=$(HUB_STATE_DIR=$state "$bin/hubctl" tokens add bench --scope read 2>/dev/null)
# The route opened to anyone too: what an unauthenticated read costs, in the same hubd.
BENCH_HTTP="http: {listen: \"127.0.0.1:0\", public: [/metrics, /api/v1/sensors], token: $BENCH_TOKEN}" \
    start_hubd "$state" ""

# One client process per run: REQUESTS GETs on one connection with the given header; prints the wall seconds. A
# login first, for the cookie (and its time).
python3 - "$hub_http" "$password" >"$work/login" <<'PY'
import http.client, sys, time, urllib.parse
port, password = int(sys.argv[1]), sys.argv[2]
body = urllib.parse.urlencode({"user": "ana", "password": password})
times = []
for _ in range(5):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    start = time.perf_counter()
    connection.request("POST", "/login", body, {"Origin": f"http://127.0.0.1:{port}",
        "Content-Type": "application/x-www-form-urlencoded"})
    answer = connection.getresponse(); answer.read()
    times.append(time.perf_counter() - start)
    assert answer.status == 303, answer.status
    cookie = answer.getheader("Set-Cookie").split(";")[0]
times.sort()
print(cookie, "%.1f" % (times[len(times) // 2] * 1000))
PY
read -r cookie login_ms <"$work/login"

run() { # header → wall seconds for REQUESTS GETs
    python3 - "$hub_http" "$REQUESTS" "$1" <<'PY'
import http.client, sys, time
port, count, header = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
headers = {}
if header:
    name, value = header.split(": ", 1)
    headers[name] = value
connection = http.client.HTTPConnection("127.0.0.1", port)
start = time.perf_counter()
for _ in range(count):
    connection.request("GET", "/api/v1/sensors", headers=headers)
    answer = connection.getresponse(); answer.read()
    assert answer.status == 200, answer.status
print("%.4f" % (time.perf_counter() - start))
PY
}

declare -A wall cpu
ways=(none token cookie configured)
header_of() {
    case $1 in
    none) echo "" ;;
    token) echo "Authorization: Bearer $token" ;;
    cookie) echo "Cookie: $cookie" ;;
    configured) echo "Authorization: Bearer $BENCH_TOKEN" ;;
    esac
}
run "$(header_of token)" >/dev/null  # warm up
for round in $(seq "$ROUNDS"); do
    wait_quiet "round $round"
    for way in "${ways[@]}"; do
        c0=$(cpu_ticks "$hub_pid")
        seconds=$(run "$(header_of "$way")")
        ticks=$(($(cpu_ticks "$hub_pid") - c0))
        wall[$way]+=" $(awk -v s="$seconds" -v n="$REQUESTS" 'BEGIN { printf "%.1f", s * 1e6 / n }')"
        cpu[$way]+=" $(awk -v t="$ticks" -v hz="$TICK" -v n="$REQUESTS" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }')"
    done
done
stop_hubd

label() {
    case $1 in
    none) echo "no identity (the route in http.public)" ;;
    token) echo "an API token (shub_…, hubctl tokens add)" ;;
    cookie) echo "a session cookie (a login)" ;;
    configured) echo "http.token" ;;
    esac
}
base_cpu=$(median ${cpu[none]})
{
    echo "# The cost of an identity, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/auth.sh\`: release hubd, $SENSORS sensors, GET /api/v1/sensors $REQUESTS times on one kept-alive"
    echo "connection each way, $ROUNDS rounds (median, range of the rounds, largest deviation). hubd's CPU from /proc"
    echo "(10 ms ticks) over exactly each run; the wall time includes the Python client."
    echo
    echo "| identity | hubd CPU a request | beside no identity | wall a request |"
    echo "|---|---|---|---|"
    for way in "${ways[@]}"; do
        m=$(median ${cpu[$way]})
        echo "| $(label "$way") | $(spread '%.1f' ' µs' ${cpu[$way]}) | $(awk -v a="$m" -v b="$base_cpu" 'BEGIN { printf "%+.1f µs", a - b }') | $(spread '%.1f' ' µs' ${wall[$way]}) |"
    done
    echo
    echo "A login (POST /login: argon2id m = 19 MiB, t = 2, and the session written with fsync): $login_ms ms, the"
    echo "median of 5."
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
} | tee "$OUT"
