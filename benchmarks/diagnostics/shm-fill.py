#!/usr/bin/env python3
"""How long a 128 MB cache fill takes into fresh tmpfs pages against pages a file already has.

    python3 benchmarks/diagnostics/shm-fill.py [--mb 128] [--rounds 4]

Writes the size in 256 KiB pwrite calls (as the cachelet's StreamCopy does) into a new file in /dev/shm, then again
over the same file, and prints both; the file is removed at the end. The gap is what SharedMemoryStore's kept files
(docs/design-notes.md) save a large miss.
"""
import argparse
import os
import time


def fill(fd: int, buffer: bytes, slices: int) -> float:
    start = time.perf_counter()
    for i in range(slices):
        os.pwrite(fd, buffer, i * len(buffer))
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    buffer = os.urandom(256 * 1024)
    slices = args.mb * 4
    path = f"/dev/shm/faascache-shm-fill-{os.getpid()}"
    try:
        for _ in range(args.rounds):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            fresh = fill(fd, buffer, slices)
            kept = fill(fd, buffer, slices)
            os.close(fd)
            os.unlink(path)
            print(f"{args.mb} MB: new file {fresh:.1f} ms, over its own pages {kept:.1f} ms ({fresh / kept:.1f}x)")
    finally:
        if os.path.exists(path):
            os.unlink(path)


if __name__ == "__main__":
    main()
