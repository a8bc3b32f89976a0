#!/usr/bin/env python3
"""What one fsync costs a Raspberry Pi's card beyond the bytes it makes durable.

Makes an ext4 image as Raspberry Pi OS makes its card's root (with its journal), loop-mounts it
`defaults,noatime`, and appends 10 s of a home's journal lines (40 lines, 9 KiB) then syncs, N times,
in each of the ways a file can grow:
  append           append, fsync (the file's size moves: ext4 commits a transaction of its own)
  append-reserved  the same, its blocks allocated ahead (fallocate KEEP_SIZE, as hubd's journal does)
  overwrite        bytes written over zeros already on disk, fdatasync (no size or block changes)
and prints what the device was written per sync (/sys/block/loopN/stat), beside the data itself.
Needs root (losetup, mount). Usage: sudo bench/fsync-cost.py [N]   (N: syncs per way, 300 by default)
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
CHUNK = (b'x' * 229 + b'\n') * 40
libc = ctypes.CDLL('libc.so.6', use_errno=True)
FALLOC_FL_KEEP_SIZE = 1


def device_bytes(device):
    with open('/sys/block/%s/stat' % device) as f:
        return int(f.read().split()[6]) * 512


def measure(way, path, device):
    if way == 'overwrite':
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b'\0' * (len(CHUNK) * N + 4096))
        os.fsync(fd)
        os.lseek(fd, 0, os.SEEK_SET)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        if way == 'append-reserved':
            libc.fallocate(fd, FALLOC_FL_KEEP_SIZE, ctypes.c_long(0), ctypes.c_long(len(CHUNK) * N + 65536))
    # ext4 commits what the set-up left every 5 s (commit=5): let it, before counting.
    time.sleep(6)
    before = device_bytes(device)
    for _ in range(N):
        os.write(fd, CHUNK)
        if way == 'overwrite':
            os.fdatasync(fd)
        else:
            os.fsync(fd)
        time.sleep(0.05)
    time.sleep(8)
    written = device_bytes(device) - before
    os.close(fd)
    return written / N


def main():
    work = tempfile.mkdtemp(prefix='fsync-cost.')
    image, mount = os.path.join(work, 'card.img'), os.path.join(work, 'mnt')
    os.mkdir(mount)
    subprocess.run(['truncate', '-s', '2G', image], check=True)
    subprocess.run(['mkfs.ext4', '-q', '-F', image], check=True)
    loop = subprocess.run(['losetup', '-f', '--show', image], check=True, capture_output=True, text=True)
    loop = loop.stdout.strip()
    try:
        subprocess.run(['mount', '-o', 'defaults,noatime', loop, mount], check=True)
        try:
            device = os.path.basename(loop)
            print('# What an fsync costs a Pi-like ext4 (journal, noatime), %d syncs of %.1f KiB each way\n'
                  % (N, len(CHUNK) / 1024))
            print('| way | the device written per sync | beyond the data |')
            print('|---|---|---|')
            for way in ['append', 'append-reserved', 'overwrite']:
                cost = measure(way, os.path.join(mount, way), device)
                print('| %s | %.1f KiB | %.1f KiB |' % (way, cost / 1024, (cost - len(CHUNK)) / 1024))
        finally:
            subprocess.run(['umount', mount], check=True)
    finally:
        subprocess.run(['losetup', '-d', loop], check=True)
        os.remove(image)
        os.rmdir(mount)
        os.rmdir(work)


if __name__ == '__main__':
    main()
