#!/usr/bin/env python3
"""The raw-TCP floor of the remote-read benchmark: a separate process that serves N bytes over loopback TCP.

usage: tcp_floor_sender.py <max bytes> [bind address]

Listens on 127.0.0.1 or the bind address (e.g. a network namespace's own address; a free port, printed as "port <p>" on stdout), accepts one connection at a time; for each
request (8 bytes, little-endian length) it sends that many bytes of one preallocated random buffer with one
sendall (a C loop over send(2), no Python per chunk), as an owner would send an object it holds in memory.
Exits when its stdin closes, so it never outlives the benchmark that started it.
"""

import os
import socket
import struct
import sys
import threading


def watch_stdin() -> None:
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def serve(conn: socket.socket, data: memoryview) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn:
        while True:
            header = b""
            while len(header) < 8:
                part = conn.recv(8 - len(header))
                if not part:
                    return
                header += part
            (length,) = struct.unpack("<q", header)
            if length < 0 or length > len(data):
                return
            conn.sendall(data[:length])


def main() -> None:
    size = int(sys.argv[1])
    data = memoryview(bytearray(os.urandom(size)))
    threading.Thread(target=watch_stdin, daemon=True).start()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", 0))
    listener.listen(4)
    print(f"port {listener.getsockname()[1]}", flush=True)
    while True:
        conn, _ = listener.accept()
        serve(conn, data)


if __name__ == "__main__":
    main()
