#!/usr/bin/env bash
# Sourced by other scripts: start_azurite starts Azurite's blob service on a free port with its data in a
# temporary folder (listening on $AZURITE_HOST, default 127.0.0.1; 0.0.0.0 lets network namespaces reach it) and its
# queue service on another (queue triggers and outputs, the blob trigger's poison queue), and sets AZURITE_PID,
# AZURITE_PORT, AZURITE_QUEUE_PID, AZURITE_QUEUE_PORT, AZURITE_DIR and AZURITE_CONNECTION (with both endpoints);
# stop_azurite ends both.
# Started with --skipApiVersionCheck is not needed: the storage client pins service version 2025-11-05.

start_azurite() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    # shellcheck source=scripts/lib/common.sh
    declare -F free_port >/dev/null || source "$root/scripts/lib/common.sh"
    AZURITE_DIR="$(mktemp -d /tmp/faascache-azurite.XXXXXX)"
    local attempt started=""
    # Another process may bind the free port first (a race no probe closes): then try another port, three times.
    for attempt in 1 2 3; do
        AZURITE_PORT="$(free_port)" || { echo "no free port for Azurite" >&2; return 1; }
        node "$root/node_modules/azurite/dist/src/blob/main.js" --blobHost "${AZURITE_HOST:-127.0.0.1}" --blobPort "$AZURITE_PORT" \
            --location "$AZURITE_DIR" --silent --loose --disableTelemetry >"$AZURITE_DIR/azurite.log" 2>&1 &
        AZURITE_PID=$!
        for _ in $(seq 1 300); do
            # Its own line, not a connect probe: a probe could reach another server that holds the port.
            if grep -q "successfully listens on" "$AZURITE_DIR/azurite.log"; then
                started=yes
                break 2
            fi
            kill -0 "$AZURITE_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$AZURITE_PID" 2>/dev/null || ! grep -q EADDRINUSE "$AZURITE_DIR/azurite.log" || [ "$attempt" -eq 3 ]; then
            break
        fi
        echo "Azurite could not bind port $AZURITE_PORT (in use); trying another" >&2
    done
    if [ -z "$started" ]; then
        if kill -0 "$AZURITE_PID" 2>/dev/null; then
            echo "Azurite did not listen on port $AZURITE_PORT within 30 s:" >&2
            kill "$AZURITE_PID" 2>/dev/null || true
        else
            echo "Azurite exited at start-up:" >&2
        fi
        cat "$AZURITE_DIR/azurite.log" >&2
        return 1
    fi
    start_azurite_queue "$root" || { stop_azurite; return 1; }
    local key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    AZURITE_CONNECTION="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=http://127.0.0.1:$AZURITE_PORT/devstoreaccount1;QueueEndpoint=http://127.0.0.1:$AZURITE_QUEUE_PORT/devstoreaccount1;"
    export AZURITE_PID AZURITE_PORT AZURITE_QUEUE_PID AZURITE_QUEUE_PORT AZURITE_DIR AZURITE_CONNECTION
    echo "Azurite (blob) on http://127.0.0.1:$AZURITE_PORT/devstoreaccount1, (queue) on http://127.0.0.1:$AZURITE_QUEUE_PORT/devstoreaccount1, pids $AZURITE_PID $AZURITE_QUEUE_PID, data in $AZURITE_DIR"
}

# The queue service beside the blob one (same data folder), on a free port of its own.
start_azurite_queue() {
    local root="$1" attempt
    for attempt in 1 2 3; do
        AZURITE_QUEUE_PORT="$(free_port)" || { echo "no free port for Azurite's queue service" >&2; return 1; }
        : >"$AZURITE_DIR/azurite-queue.log"
        node "$root/node_modules/azurite/dist/src/queue/main.js" --queueHost "${AZURITE_HOST:-127.0.0.1}" --queuePort "$AZURITE_QUEUE_PORT" \
            --location "$AZURITE_DIR" --silent --loose --disableTelemetry >"$AZURITE_DIR/azurite-queue.log" 2>&1 &
        AZURITE_QUEUE_PID=$!
        for _ in $(seq 1 300); do
            if grep -q "successfully listens on" "$AZURITE_DIR/azurite-queue.log"; then
                return 0
            fi
            kill -0 "$AZURITE_QUEUE_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill "$AZURITE_QUEUE_PID" 2>/dev/null || true
        grep -q EADDRINUSE "$AZURITE_DIR/azurite-queue.log" && [ "$attempt" -lt 3 ] && continue
        echo "Azurite's queue service did not start:" >&2
        cat "$AZURITE_DIR/azurite-queue.log" >&2
        return 1
    done
}

stop_azurite() {
    local pid
    for pid in "${AZURITE_PID:-}" "${AZURITE_QUEUE_PID:-}"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    AZURITE_QUEUE_PID=""
    [ -n "${AZURITE_DIR:-}" ] && rm -rf "$AZURITE_DIR"
    AZURITE_PID=""
}
