#!/usr/bin/env python3
"""What bench/home.sh's hubd wrote, by file: a line each, the file's name (spaces as no-break spaces) and numbers.

  home-files.py strace TRACE STATE            bytes asked, writes and fsyncs, from `strace -f -y` (TRACE)
  home-files.py pages PAGES INODES DISK HUB   bytes of the pages hub (a pid) dirtied, from `perf script -F pid,trace`
                                              of writeback:writeback_dirty_folio (PAGES), with INODES the
                                              `stat -c '%i %n'` lines of the state directory's files, DISK the
                                              directory whose filesystem holds them

A file written through a temporary name and renamed counts under its own name (`name_of`), in both.
"""
import collections
import os
import re
import sys


def name_of(path, state=None):
    if path == state:
        return "(the state directory, after a rename)"
    name = path.rsplit("/", 1)[-1]
    # A file replaced atomically is written as `.alerts.json.<pid>.<random>.tmp` and renamed.
    name = re.sub(r"\.tmp$", "", name)
    return re.sub(r"^\.(.*)\.\d+\.\d+$", r"\1", name)


def show(name):
    return name.replace(" ", "\u00a0")


def by_strace(trace, state):
    """`write(7</var/tmp/…/journal.jsonl>, "…", 312) = 312`; sockets and pipes are left out (they are not disk)."""
    call = re.compile(r"^(\d+) +(write|pwrite64|writev|fsync|fdatasync)\(\d+<([^>]*)>.*?(?:= (-?\d+))?$")
    resumed = re.compile(r"^(\d+) +<\.\.\. (write|pwrite64|writev|fsync|fdatasync) resumed>.*= (-?\d+)")
    files, pending = {}, {}

    def count(kind, name, result):
        entry = files.setdefault(name, [0, 0, 0])
        if kind in ("fsync", "fdatasync"):
            entry[2] += 1
        elif result is not None and int(result) > 0:
            entry[0] += int(result)
            entry[1] += 1

    for line in open(trace, errors="replace"):
        line = line.rstrip("\n")
        m = call.match(line)
        if m:
            pid, kind, path, result = m.groups()
            if re.match(r"^(socket|pipe|anon_inode|TCP|UDP|UNIX):", path) or path.startswith("/dev/"):
                continue
            if line.endswith("<unfinished ...>"):
                pending[pid] = (kind, name_of(path, state))
                if kind in ("fsync", "fdatasync"):
                    count(kind, pending.pop(pid)[1], None)
                continue
            count(kind, name_of(path, state), result)
            continue
        m = resumed.match(line)
        if m and m.group(1) in pending:
            kind, name = pending.pop(m.group(1))
            count(kind, name, m.group(3))
    for name, (written, calls, syncs) in sorted(files.items(), key=lambda item: -item[1][0]):
        print(show(name), written, calls, syncs)


def by_pages(pages_file, inodes_file, disk, hub):
    """`  123 bdi 254:0: ino=6725696 index=0`, a page each."""
    # An inode freed (a file replaced by rename) can be given to the next file made: on a small filesystem (a
    # PI_DISK image) at once. Each is named by the file it was in most of the looks, every 2 s.
    seen = collections.defaultdict(collections.Counter)
    for line in open(inodes_file, errors="replace"):
        inode, _, path = line.rstrip("\n").partition(" ")
        seen[inode][name_of(path)] += 1
    names = {inode: counts.most_common(1)[0][0] for inode, counts in seen.items()}
    device = os.stat(disk).st_dev
    pages = {}
    for line in open(pages_file, errors="replace"):
        m = re.match(r"^\s*(\d+)\s.*\bbdi (\d+):(\d+): ino=(\d+)", line)
        # hubd's own pages, on the state directory's device (a page of another disk's is not this one's).
        if not m or m.group(1) != hub or (int(m.group(2)), int(m.group(3))) != (os.major(device), os.minor(device)):
            continue
        ino = m.group(4)
        if ino in names:
            name = names[ino]
        elif int(ino) == (os.major(device) << 20 | os.minor(device)):
            # The block device's inode is numbered by its device (the kernel's major << 20 | minor).
            name = "(the filesystem's own blocks)"
        else:
            name = "(a file since replaced)"
        pages[name] = pages.get(name, 0) + 1
    for name, count in sorted(pages.items(), key=lambda item: -item[1]):
        print(show(name), count * 4096)


if __name__ == "__main__":
    if sys.argv[1:2] == ["strace"] and len(sys.argv) == 4:
        by_strace(*sys.argv[2:])
    elif sys.argv[1:2] == ["pages"] and len(sys.argv) == 6:
        by_pages(*sys.argv[2:])
    else:
        sys.exit(__doc__)
