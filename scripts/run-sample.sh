#!/usr/bin/env bash
# Runs a sample function app on the FaaSCache host against a private Azurite and shows, request by
# request, where every blob input came from (LM local miss / LH local hit / storage) and how many bytes
# the host copied, including the blob-triggered stages the requests set off.
#
# usage: scripts/run-sample.sh <sample> [--cache on|off] [--requests N] [--no-build]
#   samples: amber-alert-v2 (Python v2, function_app.py), amber-alert (Python v1, function.json),
#            thumbnail-node-v4 (Node.js v4, @azure/functions 4.x), thumbnail-node (Node.js v3, function.json),
#            thumbnail-dotnet (C# isolated, Microsoft.Azure.Functions.Worker 2.52: run from its Release build output)
#
#   --cache on|off   run the host with the cache (default) or as the stock host does (bytes over gRPC)
#   --requests N     HTTP requests to send, one after the other (default 3); the sample seeds two inputs
#                    (camera-1/2.ppm, photo-1/2.ppm) and request i uses input ((i-1) mod 2)+1: request 1 meets
#                    a cold cache, request 2 a new input with the models cached, request 3 repeats request 1
#   --no-build       use the Release build that is there
#
# Steps: start Azurite (scripts/lib/azurite.sh) -> build the host (Release) -> seed the sample's blobs
# (samples/<sample>/seed.sh) -> start the host on a free port -> per request: curl, wait for the
# blob-triggered stages (bounded), print the invocations from /admin/invocations -> summary -> stop the
# host with SIGTERM and check it left no process or shared-memory map behind -> stop Azurite.
# Everything started here is stopped and every temporary file removed on exit, on failure too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

LOG_PREFIX=run-sample
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
usage() { sed -n '6,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

sample=""
cache=on
requests=3
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --cache) cache="${2:-}"; shift 2 || die "--cache needs on or off" ;;
        --requests) requests="${2:-}"; shift 2 || die "--requests needs a number" ;;
        --no-build) build=0; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) usage >&2; die "unknown option '$1'" ;;
        *) [ -z "$sample" ] || die "one sample at a time ('$sample' and '$1')"; sample="$1"; shift ;;
    esac
done
[ -n "$sample" ] || { usage >&2; exit 2; }
[[ "$cache" == on || "$cache" == off ]] || die "--cache must be on or off, not '$cache'"
[[ "$requests" =~ ^[1-9][0-9]*$ ]] || die "--requests must be a positive number, not '$requests'"
[ "$requests" -le 100 ] || die "--requests $requests: at most 100 (the host's /admin/invocations keeps the last 500 invocations)"

# What each sample serves: the HTTP function, the route of item k, and the blob-triggered stages.
case "$sample" in
    amber-alert|amber-alert-v2)
        http_function=BoundingBox; route='bounding-box/camera-%d.ppm'; downstream=(People Car)
        legend="BoundingBox reads a 35 MiB model and writes labelled/<image>; that write fires People (97 MiB model) and Car (5 MiB model)" ;;
    thumbnail-node|thumbnail-node-v4)
        http_function=Thumbnail; route='thumbnail/photo-%d.ppm'; downstream=(IndexThumbnail)
        legend="Thumbnail reads a 4 MiB photo and writes a 64 KiB thumbnail; that write fires IndexThumbnail"
        [ -d src/Workers/node/node_modules ] || die "the Node worker is not installed (src/Workers/node/node_modules is missing): run bash scripts/setup.sh"
        [ "$sample" != thumbnail-node-v4 ] || [ -d "samples/$sample/node_modules/@azure/functions" ] \
            || die "samples/$sample/node_modules/@azure/functions is missing: run bash scripts/setup.sh (it runs npm ci in the app)" ;;
    thumbnail-dotnet)
        http_function=Thumbnail; route='thumbnail/photo-%d.ppm'; downstream=(IndexThumbnail)
        legend="Thumbnail (C# isolated, ASP.NET Core integration) reads a 4 MiB photo and writes a 64 KiB thumbnail; that write fires IndexThumbnail" ;;
    *) usage >&2; die "unknown sample '$sample' (amber-alert-v2, thumbnail-node-v4, thumbnail-dotnet, amber-alert, thumbnail-node)" ;;
esac
items=2  # inputs seeded by each sample's seed.sh
app="$root/samples/$sample"
seed="$app/seed.sh"
if [ "$sample" = thumbnail-dotnet ]; then
    # A C# isolated app runs from its build output (worker.config.json, functions.metadata, the dll), as func start does.
    bash scripts/setup.d/dotnet-apps.sh >/dev/null || die "samples/$sample does not build (bash scripts/setup.d/dotnet-apps.sh says why)"
    app="$(dirname "$(find "$app/bin/Release" -name worker.config.json -print -quit)")"
    [ -d "$app" ] || die "samples/$sample has no build output with a worker.config.json under bin/Release"
fi
dll="$root/src/Host.Cache/FaaSCache.Host/bin/Release/net10.0/FaaSCache.Host.dll"
tool="$root/src/Tools/FaaSCache.Tools/bin/Release/net10.0/faascache.dll"
[ -x node_modules/.bin/azurite-blob ] || die "Azurite is not installed (node_modules/.bin/azurite-blob): run bash scripts/setup.sh"

work="$(mktemp -d /tmp/faascache-run-sample.XXXXXX)"
host_pid=""
host_rc=0
instance="run-sample-$$"
shm_dir=""

# Removes the maps this run's host created, when the host could not do it itself (it was killed).
remove_leftover_maps() {
    [ -n "$shm_dir" ] || return 0
    local journal left=0 line name
    journal="$(dirname "$shm_dir")/FaaSCache/$instance.maps"
    if [ -f "$journal" ]; then
        # Lines: "pid <pid> <start>", then "+<map>" (created or adopted) and "-<map>" (removed).
        while read -r line; do
            name="${line:1}"
            [[ "$line" == +* && "$name" =~ ^[0-9a-f]{32}$ ]] || continue
            if [ -e "$shm_dir/$name" ]; then rm -f "$shm_dir/$name"; left=$((left + 1)); fi
        done <"$journal"
        rm -f "$journal"
        say "removed $left shared-memory map(s) and the journal the host left behind"
    fi
}

# A worker outlives a host that was killed (its stream ends, it may linger): end the ones this run started.
stop_orphaned_workers() {
    local p alive=""
    for p in ${worker_pids:-}; do
        if kill -0 "$p" 2>/dev/null && grep -q worker "/proc/$p/cmdline" 2>/dev/null; then alive="$alive $p"; kill -TERM "$p" 2>/dev/null || true; fi
    done
    [ -n "$alive" ] || return 0
    say "stopping worker process(es)$alive left by the host"
    local _ any
    for _ in $(seq 1 50); do
        any=0
        for p in $alive; do kill -0 "$p" 2>/dev/null && any=1; done
        [ "$any" -eq 1 ] || return 0
        sleep 0.1
    done
    for p in $alive; do kill -KILL "$p" 2>/dev/null || true; done
}

stop_host() {
    [ -n "$host_pid" ] || return 0
    if kill -0 "$host_pid" 2>/dev/null; then
        say "stopping the host (SIGTERM to pid $host_pid)"
        kill -TERM "$host_pid" 2>/dev/null || true
        for _ in $(seq 1 300); do kill -0 "$host_pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$host_pid" 2>/dev/null; then
            say "the host did not stop within 30 s: SIGKILL"
            kill -KILL "$host_pid" 2>/dev/null || true
        fi
    fi
    set +e
    wait "$host_pid" 2>/dev/null
    host_rc=$?
    set -e
    host_pid=""
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    if [ -n "$host_pid" ]; then
        stop_host
        [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ] && [ "$rc" -ne 143 ] && [ -f "$work/host.log" ] && { say "last lines of the host's log:"; tail -n 40 "$work/host.log" | sed 's/^/    /'; }
        remove_leftover_maps
        stop_orphaned_workers
    fi
    if [ -n "${AZURITE_PID:-}" ]; then
        say "stopping Azurite (pid $AZURITE_PID)"
        stop_azurite
    fi
    rm -rf "$work"
    shm_folders_tidy
    [ "$rc" -eq 0 ] || say "failed (exit code $rc); everything started here has been stopped"
    exit "$rc"
}
shm_folders_note
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

http_get() {  # http_get <url> <file>: body to file, prints "<HTTP status> <seconds>"
    curl -sS --max-time 120 -o "$2" -w '%{http_code} %{time_total}\n' "$1"
}

say "sample '$sample' ($app), cache $cache, $requests request(s); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

# shellcheck source=scripts/lib/azurite.sh
source scripts/lib/azurite.sh
say "starting Azurite"
start_azurite >"$work/azurite.txt"  # not in a pipe: it sets AZURITE_* in this shell
sed 's/^/[run-sample] /' "$work/azurite.txt"
export AzureWebJobsStorage="$AZURITE_CONNECTION"  # the environment wins over local.settings.json's UseDevelopmentStorage=true

if [ "$build" -eq 1 ]; then
    say "building the host and the faascache tool (dotnet build src/Tools/FaaSCache.Tools -c Release)"
    dotnet build src/Tools/FaaSCache.Tools -c Release --verbosity quiet -nologo >"$work/build.log" 2>&1 \
        || { cat "$work/build.log" >&2; die "the host does not build"; }
fi
[ -f "$dll" ] && [ -f "$tool" ] || die "$dll or $tool not found: build them first (dotnet build src/Tools/FaaSCache.Tools -c Release)"

say "seeding blobs (samples/$sample/seed.sh)"
FAASCACHE_TOOL_DLL="$tool" bash "$seed"

port="$(free_port)" || die "no free port for the host"
base="http://127.0.0.1:$port"
say "starting the host: dotnet FaaSCache.Host.dll start --script-root samples/$sample --port $port --cache $cache --blob-poll-interval 1 --auth off"
dotnet "$dll" start --script-root "$app" --port "$port" --cache "$cache" --instance-id "$instance" --blob-poll-interval 1 --auth off \
    >"$work/host.log" 2>&1 &
host_pid=$!

# Ready: the admin endpoint answers and every worker has loaded its functions. A worker that cannot start is
# reported within seconds with its own error (the host gives up after a few tries), not after a long timeout.
dotnet "$tool" host wait --url "$base/" --pid "$host_pid" --timeout 60 || die "the host was not ready (the last lines of its log follow)"
sed -n '/^FaaSCache host: app/,/^$/p' "$work/host.log" | sed '/^$/d; s/^/    /'
shm_dir="$(dotnet "$tool" host get --url "$base/" shm-directory)"
worker_pids="$(dotnet "$tool" host get --url "$base/" worker-pids)"
say "host pid $host_pid ready, worker pid(s) $worker_pids, log $work/host.log"
mode="$(grep -m1 -o 'shared-memory inputs: .*' "$work/host.log" || true)"
[ -z "$mode" ] || say "node worker: $mode"

faascache() { dotnet "$tool" "$@"; }
stages=("$http_function" "${downstream[@]}")
fn_args=()
for f in "${stages[@]}"; do fn_args+=(--function "$f"); done

say "legend: $legend"
say "        source LM = local miss (the cachelet fetched the blob from storage into shared memory), LH = local hit (the worker"
say "        maps the cachelet's copy: nothing copied), STORAGE = cache off (downloaded, sent inside the gRPC message);"
say "        out adopted = the cache took the worker's output map as it is; stored = in storage when the invocation ended;"
say "        copied = bytes the host copied in memory for that input or output; trigger cache = fired by a write through"
say "        the cache, blob = found by polling storage"
failed=0
for i in $(seq 1 "$requests"); do
    path="$(printf "$route" $(( (i - 1) % items + 1 )))"
    echo
    say "request $i/$requests: curl $base/api/$path"
    read -r status seconds < <(http_get "$base/api/$path" "$work/response.json" || true)
    [ "$status" = 200 ] || failed=1
    say "waiting for the blob-triggered stage(s): ${downstream[*]} (up to 30 s)"
    missing_down=()
    for f in "${downstream[@]}"; do missing_down+=(--function "$f"); done
    if ! missing="$(faascache host invocations --url "$base/" "${missing_down[@]}" --count "$i" --timeout 30)"; then
        say "no invocation of $missing after 30 s"; failed=1
    fi
    faascache host report --url "$base/" "${fn_args[@]}" --request "$i" --requests "$requests" \
        --status "${status:-000}" --seconds "${seconds:-0}" --path "$path" --response "$work/response.json"
done
echo
faascache host summary --url "$base/" "${fn_args[@]}" --requests "$requests" --cache "$cache" || failed=1

# Stop the host and check what it left: processes, shared-memory maps (every map named in the
# invocation records), its journal.
echo
maps="$(faascache host maps --url "$base/")"
pid_was=$host_pid
stop_host
if [ "$host_rc" -eq 0 ]; then say "the host (pid $pid_was) exited with code 0"; else say "the host (pid $pid_was) exited with code $host_rc"; failed=1; fi
alive=""
for p in $worker_pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
left=0
for m in $maps; do [ -e "$shm_dir/$m" ] && left=$((left + 1)); done
journal="$(dirname "$shm_dir")/FaaSCache/$instance.maps"
say "after exit: worker process(es) still running: ${alive:-none}; shared-memory maps left in $shm_dir: $left of $(wc -w <<<"$maps"); journal $( [ -e "$journal" ] && echo present || echo removed )"
if [ -n "$alive" ] || [ "$left" -ne 0 ] || [ -e "$journal" ]; then
    failed=1
    stop_orphaned_workers
    remove_leftover_maps
fi
[ "$failed" -eq 0 ] || exit 1
say "done"
