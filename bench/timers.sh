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
trap 'perf probe -q -d "timers:*" 2>/dev/null || true; rm -rf "$work"' EXIT
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
perf probe -q -d "timers:*" 2>/dev/null || true  # left by a run that was killed
# Task._sleep's async context, three frames up from dispatch_after_f (swift_dispatchEnqueueWithDeadline,
# _dispatchEnqueue, DispatchGlobalTaskExecutor.enqueue: libswift_Concurrency's, the same in every build of hubd).
context='-8(+0(+0(+0(%bp))))'
args="r1=+8($context):x64" parent=$context
for level in 2 3 4 5; do
    parent="+0($parent)"
    args+=" r$level=+8($parent):x64"
done
perf probe -q -x "$dispatch" --add "timers:after=dispatch_after_f $args"
# And DispatchQueue.asyncAfter (`dispatch_after`, a block): its caller is synchronous code, on perf's stack.
perf probe -q -x "$dispatch" --add "timers:block=dispatch_after"
cp "/proc/$pid/maps" "$work/maps"
perf record -q -o "$work/perf.data" -e timers:after -e timers:block --call-graph dwarf,8192 -p "$pid" \
    -- sleep "$secs" 2>/dev/null
perf script -i "$work/perf.data" -F event,trace,ip,sym,dso 2>/dev/null >"$work/trace"
python3 - "$work/maps" "$work/trace" "$secs" <<'PY'
import collections, functools, re, subprocess, sys
maps_path, trace_path, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
code, base = [], {}
for line in open(maps_path):
    fields = line.split()
    if len(fields) < 6: continue
    start, end = (int(x, 16) for x in fields[0].split("-"))
    base.setdefault(fields[5], start - int(fields[2], 16))
    if "x" in fields[1]: code.append((start, end, fields[5]))
names = {}
@functools.cache
def demangle(symbol):
    out = subprocess.run(["swift", "demangle", "--simplified", "--compact", symbol], capture_output=True, text=True)
    return out.stdout.strip() or symbol
def name(address):
    for start, end, path in code:
        if start <= address < end:
            key = (path, address - base[path])
            if key not in names:
                out = subprocess.run(["addr2line", "-f", "-e", path, hex(key[1])], capture_output=True, text=True)
                names[key] = demangle(out.stdout.split("\n")[0])
            return names[key]
    return hex(address)
# A sample: its header line (the event, the probe's values), then its stack a frame a line, then a blank line.
counts = collections.Counter()
for sample in open(trace_path).read().split("\n\n"):
    lines = [l for l in sample.split("\n") if l.strip()]
    if not lines: continue
    if "timers:after" in lines[0]:
        chain = [name(int(v, 16)) for v in re.findall(r"r\d=0x([0-9a-f]+)", lines[0])]
        # The runtime's own frames (Clock.sleep, Task.sleep) left out: the first of ours and two callers.
        ours = [n for n in chain if "Clock.sleep" not in n and "Task<>.sleep" not in n][:3]
        counts["sleep    | " + " <- ".join(ours)] += 1
    else:
        frames = [l.split(None, 1)[1] for l in lines[1:] if len(l.split(None, 1)) == 2]
        runtime = r"libdispatch|libswiftDispatch|libswift_Concurrency"
        ours = [demangle(f.rsplit(" (", 1)[0].split("+0x")[0]) for f in frames if not re.search(runtime, f)]
        counts["asyncAfter | " + " <- ".join(ours[:3])] += 1
total = sum(counts.values())
print(f"{total} timers in {secs:.0f} s: {total / secs:.2f} a second")
print("a second | what armed it: the sleeping function (or asyncAfter's caller), and up its callers")
for chain, count in counts.most_common():
    print(f"{count / secs:8.2f} | {chain}")
PY
