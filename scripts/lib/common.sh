#!/usr/bin/env bash
# Sourced by the scripts: small helpers in plain bash (no eval, no inline Python).
#   say / die         print with the calling script's prefix (set LOG_PREFIX before sourcing)
#   free_port         a TCP port nothing listens on at 127.0.0.1 right now, outside the ephemeral range
#   stop_pid PID N    SIGTERM, then SIGKILL after N seconds; returns once the process is gone
#   shm_folders_note / shm_folders_tidy
#                     remember which of the host's /dev/shm folders (AzureFunctions: maps, FaaSCache: journals) are
#                     missing now; later remove those of them that this run created and left empty

say() { printf '[%s] %s\n' "${LOG_PREFIX:-faascache}" "$*"; }
die() { printf '[%s] error: %s\n' "${LOG_PREFIX:-faascache}" "$*" >&2; exit 1; }

free_port() {
    # Below the kernel's ephemeral range: a port there can be the local end of someone's outgoing connection (or a
    # port-0 listener's), which a connect probe does not see and which makes the server's bind fail (EADDRINUSE).
    local port low=32768 _high
    read -r low _high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    [ "$low" -gt 11000 ] 2>/dev/null || low=32768
    for port in $(shuf -i 10000-$((low - 1)) -n 50); do
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

SHM_FOLDERS_CREATED=""
shm_folders_note() {
    local folder
    SHM_FOLDERS_CREATED=""
    for folder in /dev/shm/AzureFunctions /dev/shm/FaaSCache; do
        [ -e "$folder" ] || SHM_FOLDERS_CREATED="$SHM_FOLDERS_CREATED $folder"
    done
}

shm_folders_tidy() {
    local folder
    # Only folders that were not there before this run, and only when empty (another host may use them meanwhile).
    for folder in $SHM_FOLDERS_CREATED; do
        [ -d "$folder" ] && rmdir "$folder" 2>/dev/null || true
    done
}
