#!/usr/bin/env bash
# Runs several FaaSCache host instances of one function app as one cache, on this machine.
#
# usage: scripts/cluster.sh start <N> <app folder> [--consistency <preset>] [--cache on|off]
#        scripts/cluster.sh status
#        scripts/cluster.sh stop
#
#   start   starts Azurite (scripts/azurite.sh) unless AzureWebJobsStorage is set, builds the host (Release)
#           once, starts N instances of the app (ids <app>-1..<app>-N, a free HTTP port each, a peer port each,
#           a shared-memory root each, so each instance counts only its own maps), waits until every instance
#           has joined the membership list (faascache-membership/<app>.json) and its workers are ready, then
#           prints each instance's HTTP and peer endpoints and the membership list.
#             --consistency <preset>  strong | owner | ownerAsync | ownerLocalRead | local | localAsync: runs a
#                                     copy of the app whose host.json has extensions.faasCache.consistency set
#             --cache on|off          off runs the stock behaviour (no cache, so no membership and no peers)
#   status  prints each instance (alive or not), its endpoints and counters, and the membership list.
#   stop    SIGTERMs every instance (SIGKILL after 30 s), then Azurite if start started it, and checks that no
#           host or worker process and no shared-memory map is left; exits non-zero if something was.
#
# Environment:
#   AzureWebJobsStorage     use this storage account (e.g. a running Azurite) instead of starting Azurite
#   FAASCACHE_HOST_DLL      run this FaaSCache.Host.dll and do not build (e.g. the Debug build tests use)
#   FAASCACHE_CLUSTER_DIR   the cluster's folder: state file, logs, app copy (default /tmp/faascache-cluster-$UID)
#
# The state file <cluster dir>/state is bash (sourced by status and stop): app, Azurite pid and folder if started
# here, and per instance its id, pid, HTTP port, peer endpoint, shared-memory root and log file. One cluster per
# cluster folder at a time; stop removes the folder (its logs are kept if stop found something left behind).
#
# Example (manual check):
#   scripts/cluster.sh start 3 samples/amber-alert   # 3 instances, their endpoints, "members (3)"
#   scripts/cluster.sh status                        # all alive, 3 members on each
#   scripts/cluster.sh stop                          # "stopped 3 instance(s) ...: no process, no map left"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster_dir="${FAASCACHE_CLUSTER_DIR:-/tmp/faascache-cluster-$(id -u)}"
state="$cluster_dir/state"
presets="strong owner ownerAsync ownerLocalRead local localAsync"

say() { printf '[cluster] %s\n' "$*"; }
die() { printf '[cluster] error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '4,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
bad_usage() { printf '[cluster] error: %s\n' "$*" >&2; usage >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }


# is_instance <pid> <instance id>: true when pid runs the FaaSCache host as that instance (not a reused pid).
is_instance() {
    [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "FaaSCache.Host.dll start .*--instance-id $2\( \|$\)"
}

# leftovers <shm root>: pids of live processes (hosts, workers) whose environment names that shared-memory root.
leftovers() {
    local p found=""
    for p in /proc/[0-9]*; do
        p="${p#/proc/}"
        [ -r "/proc/$p/environ" ] || continue
        if grep -qzxF "FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES=$1" "/proc/$p/environ" 2>/dev/null; then found="$found $p"; fi
    done
    echo "${found# }"
}

print_members() {  # print_members <status json file>
    python3 - "$1" <<'PY'
import json, sys
from datetime import datetime, timezone
st = json.load(open(sys.argv[1]))
members = st.get("members")
if members is None:
    print("  membership off (--cache off): each instance owns every key")
    sys.exit(0)
now = datetime.now(timezone.utc)
print(f"  members ({len(members)}), as {st['instanceId']} sees them:")
width = max([len(m["id"]) for m in members] + [20])
for m in members:
    beat = m.get("lastHeartbeat")
    age = ""
    if beat:
        t = datetime.fromisoformat(beat.replace("Z", "+00:00"))
        age = f"  heartbeat {max(0.0, (now - t).total_seconds()):.1f} s ago"
    print(f"    {m['id']:<{width}} {m.get('endpoint') or '-':<28}{age}")
PY
}

cmd_start() {
    local n="" app="" consistency="" cache=on
    while [ $# -gt 0 ]; do
        case "$1" in
            --consistency) [ $# -ge 2 ] || bad_usage "--consistency needs a preset ($presets)"; consistency="$2"; shift 2 ;;
            --cache) [ $# -ge 2 ] || bad_usage "--cache needs on or off"; cache="$2"; shift 2 ;;
            -h|--help) usage; exit 0 ;;
            -*) bad_usage "unknown option '$1'" ;;
            *)
                if [ -z "$n" ]; then n="$1"
                elif [ -z "$app" ]; then app="$1"
                else bad_usage "unexpected argument '$1'"
                fi
                shift ;;
        esac
    done
    [ -n "$n" ] && [ -n "$app" ] || bad_usage "start needs the number of instances and the app folder"
    [[ "$n" =~ ^[1-9][0-9]*$ ]] && [ "$n" -le 32 ] || bad_usage "the number of instances must be 1..32, not '$n'"
    [ -d "$app" ] && [ -f "$app/host.json" ] || bad_usage "'$app' is not a function app folder (no host.json)"
    [[ "$cache" == on || "$cache" == off ]] || bad_usage "--cache must be on or off, not '$cache'"
    if [ -n "$consistency" ] && [[ ! " $presets " =~ " $consistency " ]]; then
        bad_usage "--consistency must be one of: $presets (not '$consistency')"
    fi
    if [ -f "$state" ]; then
        die "a cluster is already recorded in $state: run 'scripts/cluster.sh stop' first"
    fi

    app="$(cd "$app" && pwd)"
    local app_name
    app_name="$(basename "$app")"
    mkdir -p "$cluster_dir"
    chmod 700 "$cluster_dir"

    # Everything below is undone if start fails half-way.
    local started_azurite=0 shm_base="" ids=() pids=() ports=() peers=() roots=() logs=()
    # shellcheck disable=SC2317
    start_failed() {
        local rc=$?
        trap - EXIT INT TERM
        set +e
        [ "$rc" -ne 0 ] || return 0
        say "start failed (exit code $rc): stopping what was started"
        local i
        for i in "${!pids[@]}"; do kill -TERM "${pids[$i]}" 2>/dev/null; done
        for i in "${!pids[@]}"; do
            for _ in $(seq 1 150); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.2; done
            kill -KILL "${pids[$i]}" 2>/dev/null
            for p in $(leftovers "${roots[$i]}"); do kill -KILL "$p" 2>/dev/null; done
        done
        [ "$started_azurite" -eq 0 ] || stop_azurite >/dev/null 2>&1
        [ -z "$shm_base" ] || rm -rf "$shm_base"
        say "logs kept in $cluster_dir"
        exit "$rc"
    }
    trap start_failed EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    # Storage.
    local azurite_pid="" azurite_dir=""
    if [ -n "${AzureWebJobsStorage:-}" ]; then
        say "storage: AzureWebJobsStorage from the environment"
    else
        [ -f "$root/node_modules/azurite/dist/src/blob/main.js" ] || die "Azurite is not installed: run bash scripts/setup.sh (or set AzureWebJobsStorage)"
        # shellcheck source=scripts/azurite.sh
        source "$root/scripts/azurite.sh"
        start_azurite >"$cluster_dir/azurite.txt"  # not in a pipe: it sets AZURITE_* in this shell
        started_azurite=1
        azurite_pid="$AZURITE_PID"
        azurite_dir="$AZURITE_DIR"
        sed 's/^/[cluster] /' "$cluster_dir/azurite.txt"
        export AzureWebJobsStorage="$AZURITE_CONNECTION"
    fi

    # The host and the faascache tool (it reads the hosts' typed status), built once.
    local dll tool
    if [ -n "${FAASCACHE_HOST_DLL:-}" ]; then
        dll="$FAASCACHE_HOST_DLL"
        tool="${FAASCACHE_TOOL_DLL:-}"
        [ -f "$dll" ] || die "FAASCACHE_HOST_DLL names '$dll', which does not exist"
        [ -f "$tool" ] || die "FAASCACHE_TOOL_DLL must name the faascache.dll built with it (not '$tool')"
        say "host: $dll, tool: $tool (not building)"
    else
        dll="$root/src/Host.Cache/FaaSCache.Host/bin/Release/net10.0/FaaSCache.Host.dll"
        tool="$root/src/Host.Cache/FaaSCache.Tools/bin/Release/net10.0/faascache.dll"
        say "building the host and the tool (dotnet build src/Host.Cache/FaaSCache.Tools -c Release)"
        dotnet build "$root/src/Host.Cache/FaaSCache.Tools" -c Release --verbosity quiet -nologo >"$cluster_dir/build.log" 2>&1 \
            || { cat "$cluster_dir/build.log" >&2; die "the host does not build"; }
    fi

    # The app, or a copy of it with the consistency preset asked for.
    local script_root="$app"
    if [ -n "$consistency" ]; then
        script_root="$cluster_dir/app/$app_name"
        mkdir -p "$script_root"
        cp -a "$app/." "$script_root/"
        python3 - "$script_root/host.json" "$consistency" <<'PY' || die "cannot rewrite host.json of the app copy"
import json, sys
path, preset = sys.argv[1], sys.argv[2]
with open(path) as f:
    host = json.load(f)
cache = host.setdefault("extensions", {}).setdefault("faasCache", {})
cache["consistency"] = preset
with open(path, "w") as f:
    json.dump(host, f, indent=2)
if "persist" in cache:
    print(f"[cluster] note: host.json sets persist '{cache['persist']}', which stays in force with '{preset}'")
PY
        say "app copy with consistency '$consistency': $script_root"
    fi

    # One shared-memory root per instance.
    local shm_parent=/dev/shm
    [ -d "$shm_parent" ] || shm_parent="$cluster_dir"
    shm_base="$(mktemp -d "$shm_parent/faascache-cluster.XXXXXX")"

    local i id port
    for i in $(seq 1 "$n"); do
        id="$app_name-$i"
        port="$(free_port)"
        mkdir -p "$shm_base/$id"
        FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES="$shm_base/$id" DOTNET_CLI_TELEMETRY_OPTOUT=1 \
            dotnet "$dll" start --script-root "$script_root" --port "$port" --instance-id "$id" --app-name "$app_name" \
            --cache "$cache" </dev/null >"$cluster_dir/$id.log" 2>&1 &
        ids+=("$id"); pids+=("$!"); ports+=("$port"); peers+=(""); roots+=("$shm_base/$id"); logs+=("$cluster_dir/$id.log")
        say "started $id: pid $!, http://127.0.0.1:$port/, log $cluster_dir/$id.log"
    done

    # Ready: every instance answers, has every instance in its membership list, and its workers are ready. An
    # instance that exits, or whose worker cannot start, is reported within seconds with its error.
    local members_arg=()
    [ "$cache" = off ] || members_arg=(--members "$n")
    for i in "${!ids[@]}"; do
        if ! dotnet "$tool" host wait --url "http://127.0.0.1:${ports[$i]}/" --pid "${pids[$i]}" --timeout 120 "${members_arg[@]}" | sed 's/^/[cluster] /'; then
            say "${ids[$i]} was not ready; last lines of its log:" >&2
            tail -n 30 "${logs[$i]}" | sed 's/^/    /' >&2
            exit 1
        fi
        peers[$i]="$(dotnet "$tool" host get --url "http://127.0.0.1:${ports[$i]}/" peer-endpoint)"
    done

    {
        echo "# FaaSCache cluster state, written by scripts/cluster.sh start on $(date -u +%FT%TZ)"
        printf 'CLUSTER_APP=%q\n' "$app_name"
        printf 'CLUSTER_TOOL=%q\n' "$tool"
        printf 'CLUSTER_APP_DIR=%q\n' "$app"
        printf 'CLUSTER_SCRIPT_ROOT=%q\n' "$script_root"
        printf 'CLUSTER_CONSISTENCY=%q\n' "${consistency:-as in host.json}"
        printf 'CLUSTER_CACHE=%q\n' "$cache"
        printf 'CLUSTER_SHM_BASE=%q\n' "$shm_base"
        printf 'CLUSTER_AZURITE_PID=%q\n' "$azurite_pid"
        printf 'CLUSTER_AZURITE_DIR=%q\n' "$azurite_dir"
        printf 'CLUSTER_ID=(%s)\n' "$(printf '%q ' "${ids[@]}")"
        printf 'CLUSTER_PID=(%s)\n' "${pids[*]}"
        printf 'CLUSTER_HTTP_PORT=(%s)\n' "${ports[*]}"
        printf 'CLUSTER_PEER_ENDPOINT=(%s)\n' "$(printf '%q ' "${peers[@]}")"
        printf 'CLUSTER_SHM_ROOT=(%s)\n' "$(printf '%q ' "${roots[@]}")"
        printf 'CLUSTER_LOG=(%s)\n' "$(printf '%q ' "${logs[@]}")"
    } >"$state.tmp"
    mv "$state.tmp" "$state"
    trap - EXIT INT TERM

    say "cluster of $n instance(s) of app '$app_name' is up (state: $state)"
    local width=$(( ${#app_name} + ${#n} + 1 ))
    for i in "${!ids[@]}"; do
        printf '  %-*s pid %-8s http http://127.0.0.1:%s/  peer %s\n' "$width" "${ids[$i]}" "${pids[$i]}" "${ports[$i]}" "${peers[$i]}"
    done
    curl -fsS --max-time 5 "http://127.0.0.1:${ports[0]}/admin/host/status" -o "$cluster_dir/status-0.json" || true
    print_members "$cluster_dir/status-0.json"
    rm -f "$cluster_dir"/status-*.json
}

load_state() {
    [ -f "$state" ] || die "no cluster is recorded in $state (start one with: scripts/cluster.sh start <N> <app folder>)"
    # shellcheck disable=SC1090
    source "$state"
}

cmd_status() {
    [ $# -eq 0 ] || bad_usage "status takes no arguments"
    load_state
    say "app '$CLUSTER_APP' ($CLUSTER_SCRIPT_ROOT), consistency $CLUSTER_CONSISTENCY, cache $CLUSTER_CACHE, ${#CLUSTER_ID[@]} instance(s)"
    local i alive=0 shown="" tmp width=20
    for i in "${!CLUSTER_ID[@]}"; do [ "${#CLUSTER_ID[$i]}" -le "$width" ] || width="${#CLUSTER_ID[$i]}"; done
    tmp="$(mktemp)"
    for i in "${!CLUSTER_ID[@]}"; do
        if ! is_instance "${CLUSTER_PID[$i]}" "${CLUSTER_ID[$i]}"; then
            printf '  %-*s pid %-8s DOWN\n' "$width" "${CLUSTER_ID[$i]}" "${CLUSTER_PID[$i]}"
            continue
        fi
        if ! curl -fsS --max-time 5 "http://127.0.0.1:${CLUSTER_HTTP_PORT[$i]}/admin/host/status" -o "$tmp" 2>/dev/null; then
            printf '  %-*s pid %-8s running, but /admin/host/status does not answer\n' "$width" "${CLUSTER_ID[$i]}" "${CLUSTER_PID[$i]}"
            continue
        fi
        alive=$((alive + 1))
        python3 - "$tmp" "${CLUSTER_PID[$i]}" "$width" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
c = st.get("counters") or {}
members = st.get("members")
w = int(sys.argv[3])
print(f"  {st['instanceId']:<{w}} pid {sys.argv[2]:<8} up, peer {st.get('peerEndpoint') or '-'}, "
      f"{len(members) if members is not None else '-'} member(s), {st['sharedMemory']['maps']} map(s), "
      f"invocations {st['invocations']['succeeded']} ok / {st['invocations']['failed']} failed")
if c:
    print(f"  {'':<{w}} lh {c.get('localHits', 0)}  lm {c.get('localMisses', 0)}  rh {c.get('remoteHits', 0)}  rm {c.get('remoteMisses', 0)}"
          f"  ownerUnreachable {c.get('ownerUnreachable', 0)}  peerServed {c.get('peerServed', 0)}  invalidations {c.get('invalidations', 0)}"
          f"  bytesFromPeers {c.get('bytesFromPeers', 0)}  objects {c.get('objectsCached', 0)} ({c.get('bytesCached', 0)} bytes)")
PY
        printf '  %-*s http http://127.0.0.1:%s/  log %s\n' "$width" "" "${CLUSTER_HTTP_PORT[$i]}" "${CLUSTER_LOG[$i]}"
        [ -n "$shown" ] || { shown=1; cp "$tmp" "$tmp.members"; }
    done
    [ -z "$shown" ] || print_members "$tmp.members"
    rm -f "$tmp" "$tmp.members"
    say "$alive of ${#CLUSTER_ID[@]} instance(s) up"
    [ "$alive" -eq "${#CLUSTER_ID[@]}" ]
}

cmd_stop() {
    [ $# -eq 0 ] || bad_usage "stop takes no arguments"
    load_state
    local i p problems=0 stopped=0 down=0 left sent=()
    for i in "${!CLUSTER_ID[@]}"; do
        sent[$i]=0
        if is_instance "${CLUSTER_PID[$i]}" "${CLUSTER_ID[$i]}"; then
            kill -TERM "${CLUSTER_PID[$i]}" 2>/dev/null && sent[$i]=1
        fi
        if [ "${sent[$i]}" -eq 0 ]; then
            say "${CLUSTER_ID[$i]} (pid ${CLUSTER_PID[$i]}) was already down"
            down=$((down + 1))
        fi
    done
    for i in "${!CLUSTER_ID[@]}"; do
        p="${CLUSTER_PID[$i]}"
        [ "${sent[$i]}" -eq 1 ] || continue
        for _ in $(seq 1 300); do is_instance "$p" "${CLUSTER_ID[$i]}" || break; sleep 0.1; done
        if is_instance "$p" "${CLUSTER_ID[$i]}"; then
            say "${CLUSTER_ID[$i]} (pid $p) did not stop within 30 s of SIGTERM: SIGKILL"
            kill -KILL "$p" 2>/dev/null || true
            problems=$((problems + 1))
        else
            stopped=$((stopped + 1))
        fi
    done

    # What is left: processes (the hosts and their workers carry their shared-memory root in their environment),
    # and maps in each instance's map folder.
    local maps=0 procs=""
    for i in "${!CLUSTER_ID[@]}"; do
        left="$(leftovers "${CLUSTER_SHM_ROOT[$i]}")"
        for _ in $(seq 1 50); do [ -n "$left" ] || break; sleep 0.1; left="$(leftovers "${CLUSTER_SHM_ROOT[$i]}")"; done
        if [ -n "$left" ]; then
            say "${CLUSTER_ID[$i]}: process(es) still running after the host stopped: $left (killing them)"
            for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
            procs="$procs $left"
            problems=$((problems + 1))
        fi
        if [ -d "${CLUSTER_SHM_ROOT[$i]}/AzureFunctions" ]; then
            left="$(find "${CLUSTER_SHM_ROOT[$i]}/AzureFunctions" -type f | wc -l)"
            if [ "$left" -ne 0 ]; then
                say "${CLUSTER_ID[$i]}: $left shared-memory map(s) left in ${CLUSTER_SHM_ROOT[$i]}/AzureFunctions"
                maps=$((maps + left))
                problems=$((problems + 1))
            fi
        fi
    done
    rm -rf "$CLUSTER_SHM_BASE"

    if [ -n "$CLUSTER_AZURITE_PID" ]; then
        AZURITE_PID="$CLUSTER_AZURITE_PID"
        AZURITE_DIR="$CLUSTER_AZURITE_DIR"
        # shellcheck source=scripts/azurite.sh
        source "$root/scripts/azurite.sh"
        # It is not this shell's child: stop_azurite's wait returns at once, so wait for the pid here.
        kill -TERM "$AZURITE_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$AZURITE_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$AZURITE_PID" 2>/dev/null || true
        stop_azurite
        say "stopped Azurite (pid $CLUSTER_AZURITE_PID)"
    fi

    if [ "$problems" -eq 0 ]; then
        rm -rf "$cluster_dir"
        say "stopped $stopped instance(s) of '$CLUSTER_APP' with SIGTERM$([ "$down" -eq 0 ] || echo " ($down already down)"): no host or worker process and no shared-memory map left"
    else
        rm -f "$state"
        say "stopped ${#CLUSTER_ID[@]} instance(s) of '$CLUSTER_APP' with $problems problem(s) (processes killed:${procs:- none}; maps left: $maps); logs kept in $cluster_dir"
        exit 1
    fi
}

[ $# -ge 1 ] || bad_usage "a command is needed: start, status or stop"
command="$1"
shift
case "$command" in
    start) cmd_start "$@" ;;
    status) cmd_status "$@" ;;
    stop) cmd_stop "$@" ;;
    -h|--help|help) usage ;;
    *) bad_usage "unknown command '$command'" ;;
esac
