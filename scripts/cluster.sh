#!/usr/bin/env bash
# Runs several FaaSCache host instances of one function app as one cache, on this machine.
#
# usage: scripts/cluster.sh start <N> <app folder> [--consistency <preset>] [--cache on|off] [--storage <connection>]
#        scripts/cluster.sh status
#        scripts/cluster.sh stop
#
#   start   starts Azurite (scripts/lib/azurite.sh) and seeds it with the app's seed.sh (the samples have one) unless
#           --storage or AzureWebJobsStorage names an account, prints the connection string, builds the host (Release)
#           once, starts N instances of the app (ids <app>-1..<app>-N, a free HTTP port each, a peer port each,
#           a shared-memory root each, so each instance counts only its own maps), waits until every instance
#           has joined the membership list (faascache-membership/<app>.json) and its workers are ready, then
#           prints each instance's HTTP and peer endpoints and the membership list.
#             --consistency <preset>  strong | owner | ownerAsync | ownerLocalRead | local | localAsync: runs a
#                                     copy of the app whose host.json has extensions.faasCache.consistency set
#             --cache on|off          off runs the stock behaviour (no cache, so no membership and no peers)
#             --storage <connection>  use this storage account instead of starting Azurite (it is not seeded)
#   status  prints each instance (alive or not), its endpoints and counters, and the membership list.
#   stop    SIGTERMs every instance (SIGKILL after 30 s), then Azurite if start started it, and checks that no
#           host or worker process and no shared-memory map is left; exits non-zero if something was.
#
# Environment:
#   AzureWebJobsStorage     use this storage account (e.g. a running Azurite) instead of starting Azurite
#   FAASCACHE_HOST_DLL      run this FaaSCache.Host.dll and do not build (e.g. the Debug build tests use)
#   FAASCACHE_CLUSTER_DIR   the cluster's folder: state file, logs, app copy (default /tmp/faascache-cluster-$UID)
#
# The state file <cluster dir>/state holds one "KEY value..." line each (read by status and stop without eval): app,
# Azurite pid and folder if started here, and per instance its id, pid, HTTP port, peer endpoint, shared-memory root
# and log file. Paths must not contain spaces. One cluster per
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

LOG_PREFIX=cluster
# shellcheck source=scripts/lib/common.sh
source "$root/scripts/lib/common.sh"
usage() { sed -n '4,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
bad_usage() { printf '[cluster] error: %s\n' "$*" >&2; usage >&2; exit 2; }


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

cmd_start() {
    local n="" app="" consistency="" cache=on storage="${AzureWebJobsStorage:-}"
    while [ $# -gt 0 ]; do
        case "$1" in
            --consistency) [ $# -ge 2 ] || bad_usage "--consistency needs a preset ($presets)"; consistency="$2"; shift 2 ;;
            --cache) [ $# -ge 2 ] || bad_usage "--cache needs on or off"; cache="$2"; shift 2 ;;
            --storage) [ $# -ge 2 ] || bad_usage "--storage needs a storage connection string"; storage="$2"; shift 2 ;;
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
    [[ "$app$cluster_dir" != *[[:space:]]* ]] || die "the app folder and FAASCACHE_CLUSTER_DIR must not contain spaces ('$app', '$cluster_dir')"
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
    if [ -n "$storage" ]; then
        export AzureWebJobsStorage="$storage"
        say "storage: the account given (--storage or AzureWebJobsStorage); nothing is seeded"
    else
        [ -f "$root/node_modules/azurite/dist/src/blob/main.js" ] || die "Azurite is not installed: run bash scripts/setup.sh (or set AzureWebJobsStorage)"
        # shellcheck source=scripts/lib/azurite.sh
        source "$root/scripts/lib/azurite.sh"
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
        tool="$root/src/Tools/FaaSCache.Tools/bin/Release/net10.0/faascache.dll"
        say "building the host and the tool (dotnet build src/Tools/FaaSCache.Tools -c Release)"
        dotnet build "$root/src/Tools/FaaSCache.Tools" -c Release --verbosity quiet -nologo >"$cluster_dir/build.log" 2>&1 \
            || { cat "$cluster_dir/build.log" >&2; die "the host does not build"; }
    fi

    # A private Azurite starts empty: the app's own seed.sh (the samples have one) fills it, as run-sample.sh does.
    if [ "$started_azurite" -eq 1 ] && [ -f "$app/seed.sh" ]; then
        say "seeding the app's blobs ($app/seed.sh)"
        FAASCACHE_TOOL_DLL="$tool" bash "$app/seed.sh" --connection "$AzureWebJobsStorage" --tool "$tool" 2>&1 | sed 's/^/[cluster] /' \
            || die "$app/seed.sh failed"
    fi
    # Printed only when it holds no secret: Azurite's published development key, or no key at all. A real account's
    # connection string carries its key and stays out of the output (and of every log a run keeps).
    local azurite_key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    if [[ "$AzureWebJobsStorage" == *"AccountKey=$azurite_key"* ]] || [[ "$AzureWebJobsStorage" != *AccountKey=* && "$AzureWebJobsStorage" != *SharedAccessSignature=* ]]; then
        say "storage connection (to seed or read it yourself): export AzureWebJobsStorage='$AzureWebJobsStorage'"
    else
        say "storage: the account given; its connection string holds its key and is not printed"
    fi

    # The app, or a copy of it with the consistency preset asked for.
    local script_root="$app"
    if [ -n "$consistency" ]; then
        script_root="$cluster_dir/app/$app_name"
        mkdir -p "$script_root"
        # Links resolved (-L): an app may link shared code relatively (amber-alert-v2's shared_code -> ../amber-alert/...),
        # which would point nowhere from the copy's folder.
        cp -aL "$app/." "$script_root/"
        dotnet "$tool" host-json set "$script_root/host.json" extensions.faasCache.consistency "$consistency" | sed 's/^/[cluster] /' \
            || die "cannot rewrite host.json of the app copy"
        say "app copy with consistency '$consistency': $script_root"
    fi

    # One shared-memory root per instance.
    local shm_parent=/dev/shm
    [ -d "$shm_parent" ] || shm_parent="$cluster_dir"
    shm_base="$(mktemp -d "$shm_parent/faascache-cluster.XXXXXX")"

    # Instance k (0-based) on a free port; run again on a new one when a port it chose was taken before it bound it.
    launch() {
        local k="$1" id="${ids[$1]}" port
        port="$(free_port)"
        mkdir -p "$shm_base/$id"
        FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES="$shm_base/$id" DOTNET_CLI_TELEMETRY_OPTOUT=1 \
            dotnet "$dll" start --script-root "$script_root" --port "$port" --instance-id "$id" --app-name "$app_name" \
            --cache "$cache" --auth off </dev/null >"$cluster_dir/$id.log" 2>&1 &
        pids[k]="$!"; ports[k]="$port"; peers[k]=""; roots[k]="$shm_base/$id"; logs[k]="$cluster_dir/$id.log"
        say "started $id: pid $!, http://127.0.0.1:$port/, log $cluster_dir/$id.log"
    }

    local i
    for i in $(seq 1 "$n"); do
        ids+=("$app_name-$i")
        launch $((i - 1))
    done

    # Ready: every instance answers, has every instance in its membership list, and its workers are ready. An
    # instance that exits, or whose worker cannot start, is reported within seconds with its error.
    local members_arg=()
    [ "$cache" = off ] || members_arg=(--members "$n")
    local attempt
    for i in "${!ids[@]}"; do
        attempt=1
        while ! dotnet "$tool" host wait --url "http://127.0.0.1:${ports[$i]}/" --pid "${pids[$i]}" --timeout 120 "${members_arg[@]}" | sed 's/^/[cluster] /'; do
            # Instances start at once, each choosing free ports for its servers: another process may take one between
            # the choice and the bind. Such an instance exits at once with "address already in use"; it starts again.
            if [ "$attempt" -lt 3 ] && ! kill -0 "${pids[$i]}" 2>/dev/null && grep -q "address already in use" "${logs[$i]}"; then
                attempt=$((attempt + 1))
                say "${ids[$i]}: a port it chose was taken before it could bind it; starting it again (attempt $attempt of 3)"
                launch "$i"
                continue
            fi
            say "${ids[$i]} was not ready; last lines of its log:" >&2
            tail -n 30 "${logs[$i]}" | sed 's/^/    /' >&2
            exit 1
        done
        peers[$i]="$(dotnet "$tool" host get --url "http://127.0.0.1:${ports[$i]}/" peer-endpoint)"
    done

    # The state: one "KEY value..." line each, read back without eval (values are paths and ids without spaces).
    {
        echo "# FaaSCache cluster state, written by scripts/cluster.sh start on $(date -u +%FT%TZ)"
        echo "APP $app_name"
        echo "TOOL $tool"
        echo "APP_DIR $app"
        echo "SCRIPT_ROOT $script_root"
        echo "CONSISTENCY ${consistency:-as-in-host.json}"
        echo "CACHE $cache"
        echo "SHM_BASE $shm_base"
        echo "AZURITE_PID ${azurite_pid:--}"
        echo "AZURITE_DIR ${azurite_dir:--}"
        echo "IDS ${ids[*]}"
        echo "PIDS ${pids[*]}"
        echo "HTTP_PORTS ${ports[*]}"
        echo "PEER_ENDPOINTS ${peers[*]}"
        echo "SHM_ROOTS ${roots[*]}"
        echo "LOGS ${logs[*]}"
    } >"$state.tmp"
    mv "$state.tmp" "$state"
    trap - EXIT INT TERM

    say "cluster of $n instance(s) of app '$app_name' is up (state: $state)"
    local width=$(( ${#app_name} + ${#n} + 1 ))
    for i in "${!ids[@]}"; do
        printf '  %-*s pid %-8s http http://127.0.0.1:%s/  peer %s\n' "$width" "${ids[$i]}" "${pids[$i]}" "${ports[$i]}" "${peers[$i]}"
    done
    dotnet "$tool" host status --url "http://127.0.0.1:${ports[0]}/" --members || true
}

load_state() {
    [ -f "$state" ] || die "no cluster is recorded in $state (start one with: scripts/cluster.sh start <N> <app folder>)"
    local key rest
    while read -r key rest; do
        case "$key" in
            APP) CLUSTER_APP="$rest" ;;
            TOOL) CLUSTER_TOOL="$rest" ;;
            SCRIPT_ROOT) CLUSTER_SCRIPT_ROOT="$rest" ;;
            CONSISTENCY) CLUSTER_CONSISTENCY="$rest" ;;
            CACHE) CLUSTER_CACHE="$rest" ;;
            SHM_BASE) CLUSTER_SHM_BASE="$rest" ;;
            AZURITE_PID) CLUSTER_AZURITE_PID="${rest#-}" ;;
            AZURITE_DIR) CLUSTER_AZURITE_DIR="${rest#-}" ;;
            IDS) read -r -a CLUSTER_ID <<<"$rest" ;;
            PIDS) read -r -a CLUSTER_PID <<<"$rest" ;;
            HTTP_PORTS) read -r -a CLUSTER_HTTP_PORT <<<"$rest" ;;
            SHM_ROOTS) read -r -a CLUSTER_SHM_ROOT <<<"$rest" ;;
            LOGS) read -r -a CLUSTER_LOG <<<"$rest" ;;
            *) ;;
        esac
    done <"$state"
}

cmd_status() {
    [ $# -eq 0 ] || bad_usage "status takes no arguments"
    load_state
    say "app '$CLUSTER_APP' ($CLUSTER_SCRIPT_ROOT), consistency $CLUSTER_CONSISTENCY, cache $CLUSTER_CACHE, ${#CLUSTER_ID[@]} instance(s)"
    local i alive=0 shown="" width=20
    for i in "${!CLUSTER_ID[@]}"; do [ "${#CLUSTER_ID[$i]}" -le "$width" ] || width="${#CLUSTER_ID[$i]}"; done
    for i in "${!CLUSTER_ID[@]}"; do
        if ! is_instance "${CLUSTER_PID[$i]}" "${CLUSTER_ID[$i]}"; then
            printf '  %-*s pid %-8s DOWN\n' "$width" "${CLUSTER_ID[$i]}" "${CLUSTER_PID[$i]}"
            continue
        fi
        if ! dotnet "$CLUSTER_TOOL" host status --url "http://127.0.0.1:${CLUSTER_HTTP_PORT[$i]}/" --brief-pid "${CLUSTER_PID[$i]}" --width "$width" 2>/dev/null; then
            printf '  %-*s pid %-8s running, but /admin/host/status does not answer\n' "$width" "${CLUSTER_ID[$i]}" "${CLUSTER_PID[$i]}"
            continue
        fi
        alive=$((alive + 1))
        printf '  %-*s http http://127.0.0.1:%s/  log %s\n' "$width" "" "${CLUSTER_HTTP_PORT[$i]}" "${CLUSTER_LOG[$i]}"
        [ -n "$shown" ] || shown="${CLUSTER_HTTP_PORT[$i]}"
    done
    [ -z "$shown" ] || dotnet "$CLUSTER_TOOL" host status --url "http://127.0.0.1:$shown/" --members || true
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
        # shellcheck source=scripts/lib/azurite.sh
        source "$root/scripts/lib/azurite.sh"
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
