#!/usr/bin/env bash
# The dashboard (issue 53): what its pages weigh and take at SENSORS (1000) sensors, and what open dashboards cost a
# quiet hub. A release hubd with SENSORS sensors (each with a status), one alerting rule and one backend:
# - page weight: the bytes of every request the home page and the events page make (the HTML, script, style sheet
#   and the API answers they draw from), as served (no compression);
# - their time: those requests one after another on one connection (a browser makes them in parallel: an upper
#   bound), the median of TIMES;
# - hubd's CPU over SECS (120) seconds of a quiet hub (no message) with no dashboard open, with 3 open as the page
#   is now (each follows /api/v1/stream and fetches what it draws when told), and with 3 polling as the page did
#   before (the sensor list and the air every 2 s). CPU from /proc/<pid>/stat (10 ms ticks, threads that ended
#   included), each way ROUNDS (2) times in turn. Goals: idle ≤ 0.05 % of a core; three dashboards ≤ 0.1 % more than none.
# Prints a Markdown report and writes it to OUT (bench/results/dashboard-<date>.md).
set -euo pipefail
cd "$(dirname "$0")/.."

SENSORS=${SENSORS:-1000}
SECS=${SECS:-120}
ROUNDS=${ROUNDS:-2}
TIMES=${TIMES:-20}
OUT=${OUT:-bench/results/dashboard-$(date +%Y-%m-%d).md}

# shellcheck source=bench/lib.sh
. bench/lib.sh
release_build hubd hubctl
bench_work

start_broker
state=$work/hub
make_state "$state" "$SENSORS"
start_hubd "$state" "$(cat <<YAML
notifiers:
  backends:
    log: { type: file, path: $work/delivered.jsonl }
  rules:
    doors: { sensors: ["s1*"], events: [changed], statuses: [open], backends: [log], group_wait: 0s }
YAML
)"
# A status for every sensor (one in ten open), then quiet.
python3 - "$port" "$SENSORS" <<'PY'
import socket, struct, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
def packet(kind, body): # MQTT 3.1.1, QoS 0, a remaining length of up to 2 bytes
    n = len(body)
    length = bytes([n]) if n < 128 else bytes([(n % 128) | 128, n // 128])
    return bytes([kind]) + length + body
def text(s): b = s.encode(); return struct.pack(">H", len(b)) + b
s = socket.create_connection(("127.0.0.1", port))
s.sendall(packet(0x10, text("MQTT") + bytes([4, 2]) + struct.pack(">H", 60) + text("bench-statuses")))
s.recv(4)
for i in range(count):
    s.sendall(packet(0x31, text(f"bench/s{i}") + (b"open" if i % 10 == 1 else b"closed")))
s.sendall(bytes([0xe0, 0]))
s.close()
PY
wait_metric sensorhub_messages_total "$SENSORS"
sleep 3

# The requests each page makes, with a person's session: the home page's and the events page's.
password="bench pass phrase 42"
HUB_STATE_DIR=$state "$bin/hubctl" users add ana --role admin --password-file - <<<"$password" >/dev/null
home="/ /dashboard/app.css /dashboard/app.js /dashboard/dygraph.js /dashboard/dygraph.css /api/v1/sensors /api/v1/alerts /api/v1/silences /api/v1/notifiers /api/v1/air"
events="/events /dashboard/app.css /dashboard/events.js /api/v1/events?since=24h&limit=1000"
python3 - "$hub_http" "$password" "$TIMES" "$home" "$events" >"$work/pages" <<'PY'
import http.client, sys, time, urllib.parse
port, password, times = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
pages = {"home": sys.argv[4].split(), "events": sys.argv[5].split()}
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("POST", "/login", urllib.parse.urlencode({"user": "ana", "password": password}),
          {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/x-www-form-urlencoded"})
r = c.getresponse(); r.read()
cookie = r.getheader("Set-Cookie").split(";")[0]
for name, paths in pages.items():
    weight, runs = 0, []
    for run in range(times):
        start = time.perf_counter()
        total = 0
        for path in paths:
            c.request("GET", path, headers={"Cookie": cookie})
            r = c.getresponse(); body = r.read()
            assert r.status == 200, (path, r.status)
            total += len(body)
        runs.append(time.perf_counter() - start)
        weight = total
    runs.sort()
    print(name, weight, "%.1f" % (runs[len(runs) // 2] * 1000), len(paths))
PY

cookie_of() {
    python3 - "$hub_http" "$password" <<'PY'
import http.client, sys, urllib.parse
port, password = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("POST", "/login", urllib.parse.urlencode({"user": "ana", "password": password}),
          {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/x-www-form-urlencoded"})
r = c.getresponse(); r.read()
print(r.getheader("Set-Cookie").split(";")[0])
PY
}
cookie=$(cookie_of)
# Three pages, as the page does now (follow) or did (poll), for SECS seconds.
pages() {
    python3 - "$hub_http" "$cookie" "$1" "$SECS" "$home" <<'PY'
import http.client, sys, threading, time
port, cookie, way, secs, home = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5].split()
end = time.monotonic() + secs
fetched = [0]
def get(c, path):
    c.request("GET", path, headers={"Cookie": cookie}); r = c.getresponse(); r.read(); fetched[0] += 1
def poll():
    c = http.client.HTTPConnection("127.0.0.1", port)
    while time.monotonic() < end:
        get(c, "/api/v1/sensors"); get(c, "/api/v1/air")
        time.sleep(2)
def follow():
    c = http.client.HTTPConnection("127.0.0.1", port)
    s = http.client.HTTPConnection("127.0.0.1", port, timeout=secs + 30)
    s.request("GET", "/api/v1/stream", headers={"Cookie": cookie, "Accept": "text/event-stream"})
    r = s.getresponse()
    s.sock.settimeout(0.5)
    buffer = b""
    while time.monotonic() < end:
        try:
            chunk = r.fp.read1(4096)
        except Exception:
            continue
        if not chunk: break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            if b"event: change" in event:
                for path in home[5:]: get(c, path)
    s.close()
threads = [threading.Thread(target=poll if way == "poll" else follow) for _ in range(3)]
for t in threads: t.start()
for t in threads: t.join()
print(fetched[0])
PY
}
declare -A cost fetched
ways=(none follow poll)
for round in $(seq "$ROUNDS"); do
    for way in "${ways[@]}"; do
        c0=$(cpu_ticks "$hub_pid")
        if [ "$way" = none ]; then sleep "$SECS"; n=0; else n=$(pages "$way"); fi
        c1=$(cpu_ticks "$hub_pid")
        cost[$way]+=" $(awk -v a="$c0" -v b="$c1" -v s="$SECS" -v hz="$TICK" 'BEGIN { printf "%.4f", (b - a) / hz / s * 100 }')"
        fetched[$way]+=" $n"
    done
done
stop_hubd

label() {
    case $1 in
    none) echo "no dashboard open" ;;
    follow) echo "3 dashboards, following /api/v1/stream (now)" ;;
    poll) echo "3 dashboards, polling every 2 s (before)" ;;
    esac
}
idle=$(median ${cost[none]})
{
    echo "# The dashboard, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "\`bench/dashboard.sh\`: release hubd, $SENSORS sensors (each with a status, one in ten open and firing an"
    echo "alert), one alerting rule, a file backend."
    echo
    echo "## The pages"
    echo
    echo "Every request a page makes, one after another on one connection (a browser makes them in parallel), the"
    echo "median of $TIMES; the bytes as served."
    echo
    echo "| page | requests | weight | time |"
    echo "|---|---|---|---|"
    while read -r name weight ms count; do
        echo "| $name | $count | $(awk -v b="$weight" 'BEGIN { printf "%.0f KB", b / 1000 }') | $ms ms |"
    done <"$work/pages"
    echo
    echo "## A quiet hub with dashboards open"
    echo
    echo "hubd's CPU over $SECS s with no message arriving, in % of one core (/proc, 10 ms ticks), $ROUNDS"
    echo "rounds, each way in turn (median, range)."
    echo
    echo "| | hubd CPU | beside none | requests in ${SECS} s | goal |"
    echo "|---|---|---|---|---|"
    for way in "${ways[@]}"; do
        m=$(median ${cost[$way]})
        case $way in
        none) goal="≤ 0.05 %" ;;
        follow) goal="≤ +0.1 %" ;;
        poll) goal="–" ;;
        esac
        echo "| $(label "$way") | $(spread '%.3f' ' %' ${cost[$way]}) | $(awk -v a="$m" -v b="$idle" 'BEGIN { printf "%+.3f %%", a - b }') | $(median ${fetched[$way]}) | $goal |"
    done
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r); $(swift --version 2>&1 | head -1)."
} | tee "$OUT"
