#!/usr/bin/env python3
"""sdk-read's Python reader: azure-storage-blob downloads blobs into memory and prints each read's latency.

usage: download.py <connection string> <container> <repetitions> <warm-up blob> <blob>...
       download.py --version

As a function calls the SDK: one BlobServiceClient from the connection string (straight to storage, or with
BlobEndpoint at the SDK endpoint: the same script serves both), warmed by one read of the warm-up blob, then
`download_blob().readall()` with the SDK's defaults (a first GET of up to 32 MiB, then 4 MiB chunks one at a time).
Each blob is read <repetitions> times, blob after blob. Only the download call is timed (time.perf_counter_ns).
Prints a first line "# <sdk> <version>, <runtime>" (all that --version prints), then one line per read: "<microseconds> <bytes>".
"""

import platform
import sys
import time

from azure.storage.blob import BlobServiceClient, __version__ as sdk_version


def read_all(connection: str, container: str, repetitions: int, warmup: str, blobs: list[str]) -> list[str]:
    service = BlobServiceClient.from_connection_string(connection)
    folder = service.get_container_client(container)
    folder.get_blob_client(warmup).download_blob().readall()
    clients = [folder.get_blob_client(name) for name in blobs]
    lines = []
    for _ in range(repetitions):
        for client in clients:
            start = time.perf_counter_ns()
            data = client.download_blob().readall()
            elapsed = time.perf_counter_ns() - start
            lines.append(f"{elapsed / 1000:.1f} {len(data)}")
            del data
    return lines


def main(argv: list[str]) -> int:
    header = f"# azure-storage-blob {sdk_version}, python {platform.python_version()}"
    if argv[1:] == ["--version"]:
        print(header)
        return 0
    if len(argv) < 6 or not argv[3].isdigit():
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    connection, container, repetitions, warmup, *blobs = argv[1:]
    print(header)
    try:
        lines = read_all(connection, container, int(repetitions), warmup, blobs)
    except Exception as e:  # noqa: BLE001 (the benchmark shows the reason; the exit code says it failed)
        names = ", ".join([warmup, *blobs])
        print(f"download.py: reading {container}/{{{names}}} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
