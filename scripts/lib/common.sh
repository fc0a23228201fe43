#!/usr/bin/env bash
# Sourced by the scripts: small helpers in plain bash (no eval, no inline Python).
#   say / die         print with the calling script's prefix (set LOG_PREFIX before sourcing)
#   free_port         a TCP port nothing listens on at 127.0.0.1 right now
#   stop_pid PID N    SIGTERM, then SIGKILL after N seconds; returns once the process is gone

say() { printf '[%s] %s\n' "${LOG_PREFIX:-faascache}" "$*"; }
die() { printf '[%s] error: %s\n' "${LOG_PREFIX:-faascache}" "$*" >&2; exit 1; }

free_port() {
    local port
    for port in $(shuf -i 20000-60999 -n 50); do
        # A refused connection means nobody listens there.
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

stop_pid() {
    local pid="$1" grace="${2:-30}" _
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((grace * 10))); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
