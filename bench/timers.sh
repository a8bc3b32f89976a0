#!/usr/bin/env bash
# Which of a running hubd's sleeping functions set the timers that wake it (issue 55: CPU at a home's rate):
# `bench/timers.sh PID [SECS]` (root, perf). `TIMERS=1 bench/home.sh` runs it on a home's hub, at the home's rate.
#
# Swift's Task.sleep and Doorbell's deadlines become libdispatch timers (`dispatch_after_f`), drained by its manager
# thread, which wakes a worker for each; perf's stacks of those wakes end in the runtime, and the sleeping function is
# an async frame above them. So a uprobe on `dispatch_after_f` reads it from the sleeping task itself: up the frame
# pointers from the probe to `Task._sleep`'s frame (its async context is stored just below its frame pointer), then
# each context's parent's resume function, five levels up. The counts are per kind of caller, a second.
set -euo pipefail
pid=${1:?usage: bench/timers.sh PID [SECS]}
secs=${2:-60}
dispatch=$(awk '$6 ~ /libdispatch\.so/ { print $6; exit }' "/proc/$pid/maps")
[ -n "$dispatch" ] || dispatch=$(readlink -f "/proc/$pid/exe")  # linked statically: libdispatch is in hubd
work=$(mktemp -d)
trap 'perf probe -q -d "probe_timers:*" 2>/dev/null || true; rm -rf "$work"' EXIT
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
# Task._sleep's async context, three frames up from dispatch_after_f (swift_dispatchEnqueueWithDeadline,
# _dispatchEnqueue, DispatchGlobalTaskExecutor.enqueue: libswift_Concurrency's, the same in every build of hubd).
context='-8(+0(+0(+0(%bp))))'
args="r1=+8($context):x64" parent=$context
for level in 2 3 4 5; do
    parent="+0($parent)"
    args+=" r$level=+8($parent):x64"
done
perf probe -q -x "$dispatch" --add "timers:after=dispatch_after_f $args"
cp "/proc/$pid/maps" "$work/maps"
perf record -q -o "$work/perf.data" -e probe_timers:after -p "$pid" -- sleep "$secs" 2>/dev/null
perf script -i "$work/perf.data" -F trace 2>/dev/null >"$work/trace"
python3 - "$work/maps" "$work/trace" "$secs" <<'PY' | swift demangle --simplified
import collections, re, subprocess, sys
maps_path, trace_path, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
code, base = [], {}
for line in open(maps_path):
    fields = line.split()
    if len(fields) < 6: continue
    start, end = (int(x, 16) for x in fields[0].split("-"))
    base.setdefault(fields[5], start - int(fields[2], 16))
    if "x" in fields[1]: code.append((start, end, fields[5]))
names = {}
def name(address):
    for start, end, path in code:
        if start <= address < end:
            key = (path, address - base[path])
            if key not in names:
                out = subprocess.run(["addr2line", "-f", "-e", path, hex(key[1])], capture_output=True, text=True)
                names[key] = out.stdout.split("\n")[0]
            return names[key]
    return hex(address)
chains = (tuple(int(v, 16) for v in re.findall(r"r\d=0x([0-9a-f]+)", line)) for line in open(trace_path))
counts = collections.Counter(chains)
total = sum(counts.values())
print(f"{total} timers in {secs:.0f} s: {total / secs:.2f} a second")
print("a second | the sleeping function, and up its callers")
for chain, count in counts.most_common():
    # The runtime's own frames (Clock.sleep, Task.sleep) left out: the first of ours and two callers.
    ours = [n for n in (name(a) for a in chain) if "Clock.sleep" not in n and "Task<>.sleep" not in n][:3]
    print(f"{count / secs:8.2f} | " + " <- ".join(ours))
PY
