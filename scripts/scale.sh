#!/usr/bin/env bash
# Runs a function app behind the FaaSCache scale controller on this machine, with a live status view.
#
# usage: bash scripts/scale.sh [app folder] [controller options...]
#
#   Starts Azurite (scripts/lib/azurite.sh) unless AzureWebJobsStorage is set, builds the host, the faascache tool and
#   the controller (Release) once, seeds the app's blobs if it has a seed.sh, and runs the controller in the foreground:
#   the app's front door on a free port (http://127.0.0.1:<port>/api/...), GET /scale/status, and a console table
#   refreshed every second (instances, their votes, the reason for the count, the last decisions). The app starts at
#   zero instances: the first request is held while an instance starts; an idle app goes back to zero.
#   Ctrl+C stops the controller (which drains and stops every instance), then Azurite, then checks that no host or
#   worker process and no shared-memory folder is left (killing and removing any that is); exits non-zero if one was.
#
#   app folder           default benchmarks/apps/node (GET /api/ping/{name})
#   controller options   passed on, e.g. --max-instances 4 --idle-to-zero 30 --min-instances 1 (see --help of
#                        src/ScaleController/FaaSCache.ScaleController). With --netns (each instance in its own network
#                        namespace, e.g. --netns --link-rate 90000000) Azurite and the controller listen on 0.0.0.0.
#
# Environment:
#   AzureWebJobsStorage        use this storage account instead of starting Azurite
#   FAASCACHE_HOST_DLL         run this FaaSCache.Host.dll and do not build
#   FAASCACHE_CONTROLLER_DLL   run this FaaSCache.ScaleController.dll and do not build
#   FAASCACHE_SCALE_PORT       the front door's port (default: a free one)
#
# Example:
#   bash scripts/scale.sh                          # then, in another terminal:
#   curl http://127.0.0.1:<port>/api/ping/me       # held ~10 s while the first instance starts, then fast
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_PREFIX=scale
# shellcheck source=scripts/lib/common.sh
source "$root/scripts/lib/common.sh"
# shellcheck source=scripts/lib/azurite.sh
source "$root/scripts/lib/azurite.sh"

app="$root/benchmarks/apps/node"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    app="$(cd "$1" && pwd)" || die "no app folder '$1'"
    shift
fi
[ -f "$app/host.json" ] || die "'$app' is not a function app folder (no host.json)"

run_dir="$(mktemp -d /tmp/faascache-scale.XXXXXX)"
shm_root="$(mktemp -d /dev/shm/faascache-scale-run.XXXXXX)"
started_azurite=""
netns=""
netns_prefix=fcscale
prev=""
for arg in "$@"; do
    [ "$arg" = "--netns" ] && netns=1
    [ "$prev" = "--netns-prefix" ] && netns_prefix="$arg"
    prev="$arg"
done

# leftovers: pids of live processes (hosts, workers) whose shared-memory root is under this run's.
leftovers() {
    local p found=""
    for p in /proc/[0-9]*; do
        p="${p#/proc/}"
        [ -r "/proc/$p/environ" ] || continue
        if tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -q "^FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES=$shm_root/"; then found="$found $p"; fi
    done
    echo "${found# }"
}

cleanup() {
    local code=$? left pid
    trap - EXIT INT TERM
    [ -n "${controller_pid:-}" ] && stop_pid "$controller_pid" 90
    [ -n "$started_azurite" ] && stop_azurite
    left="$(leftovers)"
    for pid in $left; do kill -KILL "$pid" 2>/dev/null || true; done
    local shm_left
    shm_left="$(find "$shm_root" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
    rm -rf "$shm_root" "$run_dir"
    local ns_left=""
    if [ -n "$netns" ]; then
        # The controller removes its namespaces; whatever a crash left goes here (processes inside first).
        for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${netns_prefix}-[0-9]+\$" || true); do
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
            ip netns del "$ns" 2>/dev/null || true
            ns_left="$ns_left $ns"
        done
        for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${netns_prefix}v[0-9]+[abi]\$" || true); do
            ip link del "$link" 2>/dev/null || true
        done
    fi
    if [ -n "$ns_left" ]; then
        say "left behind and now removed: namespace(s)${ns_left}"
        exit 1
    fi
    if [ -n "$left" ] || [ "$shm_left" -gt 0 ]; then
        say "left behind and now removed: process(es) [${left}], ${shm_left} shared-memory folder(s)"
        exit 1
    fi
    say "stopped: no host or worker process, no shared-memory folder${netns:+, no namespace} left"
    exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${AzureWebJobsStorage:-}" ]; then
    [ -n "$netns" ] && export AZURITE_HOST=0.0.0.0
    start_azurite >"$run_dir/azurite.out" || die "Azurite did not start"
    started_azurite=1
    export AzureWebJobsStorage="$AZURITE_CONNECTION"
    say "Azurite on port $AZURITE_PORT"
fi

host_dll="${FAASCACHE_HOST_DLL:-}"
controller_dll="${FAASCACHE_CONTROLLER_DLL:-}"
if [ -z "$host_dll" ] || [ -z "$controller_dll" ]; then
    say "building the host, the faascache tool and the controller (Release; log in $run_dir/build.log)"
    { dotnet build "$root/src/Tools/FaaSCache.Tools" -c Release -nologo -v q \
        && dotnet build "$root/src/ScaleController/FaaSCache.ScaleController" -c Release -nologo -v q; } >"$run_dir/build.log" 2>&1 \
        || { cat "$run_dir/build.log" >&2; die "the build failed"; }
fi
host_dll="${host_dll:-$root/src/Host.Cache/FaaSCache.Host/bin/Release/net10.0/FaaSCache.Host.dll}"
controller_dll="${controller_dll:-$root/src/ScaleController/FaaSCache.ScaleController/bin/Release/net10.0/FaaSCache.ScaleController.dll}"
[ -f "$host_dll" ] || die "no host at $host_dll"
[ -f "$controller_dll" ] || die "no controller at $controller_dll"

if [ -x "$app/seed.sh" ] || [ -f "$app/seed.sh" ]; then
    say "seeding the app's blobs ($app/seed.sh)"
    bash "$app/seed.sh" >"$run_dir/seed.log" 2>&1 || { cat "$run_dir/seed.log" >&2; die "seeding failed"; }
fi

port="${FAASCACHE_SCALE_PORT:-$(free_port)}"
grpc_port="$(free_port)"
say "front door http://127.0.0.1:$port/api/...   status http://127.0.0.1:$port/scale/status   (Ctrl+C stops everything)"
listen=()
[ -n "$netns" ] && listen=(--listen-address 0.0.0.0)
status_view=(--status-view)
[ -t 1 ] || status_view=()  # not a terminal: log lines instead of the table
dotnet "$controller_dll" --script-root "$app" --host-dll "$host_dll" --port "$port" --grpc-port "$grpc_port" \
    --shm-root "$shm_root" --auth off "${listen[@]}" "${status_view[@]}" "$@" &
controller_pid=$!
wait "$controller_pid" || true
controller_pid=""
