#!/usr/bin/env python3
"""What a commit to the history costs an SD card (issue 55), on a history.sqlite that hubd made (its own schema).

    history-commits.py age PATH [DAYS]   fills PATH with DAYS (7) of a home's rows, as bench/home.sh's hub sees them:
                                         20 sensors, 4 messages a second (10 doors whose every message is an event,
                                         10 thermometers whose every message is a reading)
    history-commits.py measure PATH      then commits 10 minutes of the same at each interval and prints the pages
                                         SQLite appends to the write-ahead log a commit, and what that makes a day
    history-commits.py by-time PATH      the same, once the indexes that start with the sensor are replaced by ones
                                         that start with the time (an experiment: hubd's queries need the former)

SQLite appends every page a transaction changed to the WAL, whole (4 KiB), and a reading or an event changes a leaf
of each index that starts with the sensor: with 20 sensors a commit touches dozens of leaves however few rows it
holds, so rows written a second at a time cost tens of times their size. Run by `bench/history-commits.sh`.
"""
import os
import sqlite3
import sys

DOORS = [f"door{i}" for i in range(10)]
TEMPS = [f"temp{i}" for i in range(10, 20)]
RATE = 4  # messages a second, in turn over the 20 sensors
sequence = {name: 0 for name in DOORS}


def rows(start_ms, seconds):
    """A home's readings and events for `seconds` from `start_ms`."""
    readings, events = [], []
    for k in range(seconds * RATE):
        i = start_ms // (1000 // RATE) + k
        sensor, time = i % 20, start_ms + k * (1000 // RATE)
        if sensor < 10:
            name = DOORS[sensor]
            sequence[name] += 1
            new = "open" if (i // 20) % 2 == 0 else "closed"
            old = "closed" if new == "open" else "open"
            events.append((name, time, "changed", old, new, None, "home/" + name, f"{name}:{sequence[name]}"))
        else:
            readings.append((TEMPS[sensor - 10], time, 20.0 + (i % 17) / 10))
    return readings, events


def commit(db, readings, events):
    db.execute("BEGIN")
    db.executemany("INSERT INTO readings (sensor, time, value) VALUES (?, ?, ?)", readings)
    db.executemany(
        "INSERT OR IGNORE INTO events (sensor, time, kind, old, new, value, topic, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        events)
    db.execute("COMMIT")


def connect(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def start(db):
    """Where the rows already there end (the aged history's last time), or a week ago."""
    last = db.execute("SELECT max(time) FROM readings").fetchone()[0]
    return (last + 1000) if last else 1_700_000_000_000


def age(path, days):
    db = connect(path)
    now = start(db)
    for _ in range(int(days * 24)):
        readings, events = rows(now, 3600)
        commit(db, readings, events)
        now += 3600 * 1000
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"{path}: {days:g} days of a home's rows, {os.path.getsize(path) / 1e6:.0f} MB")


def measure(path):
    db = connect(path)
    now = start(db)
    # Counted from the WAL's size: no checkpoint may reset it while a run lasts.
    db.execute("PRAGMA wal_autocheckpoint = 0")
    print("| commit every | pages a commit | WAL a day |")
    print("|---|---|---|")
    for interval in (1, 5, 10, 30, 60, 300, 900):
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        commits = max(1, 600 // interval)
        for _ in range(commits):
            readings, events = rows(now, interval)
            commit(db, readings, events)
            now += interval * 1000
        pages = os.path.getsize(path + "-wal") / (4096 + 24) / commits
        print(f"| {interval} s | {pages:.1f} | {86400 / interval * pages * 4096 / 1e6:.0f} MB |")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def by_time(path):
    """Indexes that grow at their end: a commit appends to the last leaf of each, whatever the sensors."""
    db = connect(path)
    db.executescript("""
        DROP INDEX readings_by_sensor; DROP INDEX events_by_sensor; DROP INDEX events_by_time;
        DROP INDEX events_by_id;
        CREATE INDEX readings_by_time ON readings(time, sensor); CREATE INDEX events_by_time ON events(time, sensor);
        """)
    db.execute("VACUUM")
    db.close()
    measure(path)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("age", "measure", "by-time"):
        sys.exit(__doc__)
    if sys.argv[1] == "age":
        age(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 7)
    elif sys.argv[1] == "by-time":
        by_time(sys.argv[2])
    else:
        measure(sys.argv[2])
