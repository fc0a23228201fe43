#!/usr/bin/env bash
# Installs everything FaaSCache needs on a fresh Debian machine with the .NET 10 SDK and Node.js 20, then proves
# that each runtime piece works (the last step). Safe to run again: it skips what is there.
#
# usage: scripts/setup.sh                 install what is missing, then run the checks; "ready" means they passed
#        scripts/setup.sh --check         run only the checks (a few seconds); exit 1 naming what is missing
#        scripts/setup.sh --list-packages print the Debian packages the project installs, one per line
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Debian packages, each named (installed with --no-install-recommends, so nothing comes along unasked):
#   redis-server                          the Redis rows of the benchmarks and TestSupport's RedisServer
#   python3 python3-grpcio python3-protobuf python3-pytest   the Python worker, its runtime and its tests
#   python3-flake8                        the Python worker's linter (scripts/test.sh runs it)
#   python3-numpy                         the memory-daemon benchmark's functions (a column sum over a numpy array)
#   python3-pandas                        benchmarks/tools/trace_analysis.py: the blob trace's own analysis notebook, ported
#   python3-azure                         azure-storage-blob: Python functions that build their own BlobServiceClient, and the SDK endpoint tests
#   protobuf-compiler protobuf-compiler-grpc                  protoc and grpc_python_plugin for the worker's stubs
#   libprotobuf-dev                       google/protobuf/*.proto (FunctionRpc.proto imports duration.proto)
#   g++ make                              node-gyp builds the Node worker's mmap-io
#   curl                                  the scripts' HTTP requests to the host and Azurite
#   iproute2                              ip and tc: FaaSCache.NetworkEmulation's namespaces and shaped veth links
#   nftables                              nft: filtering between emulated instances (partitions)
#   iperf3                                instance-to-instance throughput in the network emulation tests
#   linux-perf                            perf: kernel and native frames in benchmarks/profile (page faults, copies)
#   podman runc mmdebstrap catatonit      scripts/images.sh, scripts/pods.sh: images and pods (runc: crun refuses this kind's hybrid cgroups; mmdebstrap: the Debian bases; catatonit: the pods' pause image)
apt_packages=(redis-server python3 python3-grpcio python3-protobuf python3-pytest python3-flake8 python3-numpy python3-pandas python3-azure protobuf-compiler
    protobuf-compiler-grpc libprotobuf-dev g++ make curl iproute2 nftables iperf3 linux-perf podman runc mmdebstrap catatonit)

say() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

mode=install
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    --list-packages) printf '%s\n' "${apt_packages[@]}"; exit 0 ;;
    -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) printf '[setup] error: unknown option %s (allowed: --check, --list-packages, --help)\n' "$1" >&2; exit 2 ;;
esac

install() {
    local missing=() p
    for p in "${apt_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "apt-get install ${missing[*]}"
        as_root apt-get update -qq
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        say "Debian packages present"
    fi
    # The redis-server package starts a system redis on 6379 where systemd runs; FaaSCache starts its own on free ports.

    # Node tooling: Azurite pinned to 3.35.0 (the last release that runs on Node 20).
    if [ ! -x node_modules/.bin/azurite-blob ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
        say "npm ci (azurite@3.35.0)"
        npm ci --no-audit --no-fund --loglevel=error
    else
        say "azurite $(node -p "require('./node_modules/azurite/package.json').version") present"
    fi

    # The Node storage SDK of the SDK-endpoint tests and the sdk-read benchmark (src/Testing/FaaSCache.Testing/sdk-clients:
    # @azure/storage-blob 12.32.0, the last release that runs on Node 20), pinned by its own package-lock.json; this step
    # installs only that package and its dependencies.
    local sdk_clients=src/Testing/FaaSCache.Testing/sdk-clients
    if [ ! -f "$sdk_clients/node_modules/.package-lock.json" ] || [ "$sdk_clients/package-lock.json" -nt "$sdk_clients/node_modules/.package-lock.json" ]; then
        say "npm ci in $sdk_clients (@azure/storage-blob for the SDK-endpoint tests and benchmarks/run sdk-read)"
        (cd "$sdk_clients" && npm ci --no-audit --no-fund --loglevel=error)
    else
        say "$sdk_clients: @azure/storage-blob present"
    fi

    # .NET local tools (.config/dotnet-tools.json): dotnet-trace and dotnet-counters for benchmarks/profile.
    say "dotnet tool restore"
    dotnet tool restore >/dev/null

    local extra
    for extra in scripts/setup.d/*.sh; do
        [ -e "$extra" ] || continue
        say "running $extra"
        bash "$extra"
    done
}

# The checks: each runs the piece for real and, when it fails, names the package (or step) that is missing.
failures=0
check() {  # check <what> <fix> <command...>
    local what="$1" fix="$2" out
    shift 2
    if out="$("$@" 2>&1)"; then
        say "ok    $what${out:+: $(tail -n 1 <<<"$out")}"
    else
        say "FAIL  $what"
        sed 's/^/[setup]         /' <<<"$(tail -n 8 <<<"$out")"
        say "      fix: $fix"
        failures=$((failures + 1))
    fi
}

package_of() {  # the listed packages that are not installed, as one line
    local p missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    echo "${missing# }"
}

fix_for() {  # fix_for <package...>: the install line naming the listed packages that are missing
    local missing
    missing="$(package_of "$@")"
    if [ -n "$missing" ]; then
        echo "apt-get install --no-install-recommends $missing (or run bash scripts/setup.sh)"
    else
        echo "the packages $* are installed; see the error above"
    fi
}

python_worker_imports() {
    /usr/bin/python3 - "$root/src/Workers/python" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
try:
    import grpc  # noqa: F401
except ImportError as e:
    sys.exit(f"the Python worker cannot import grpc ({e}): install python3-grpcio")
try:
    import google.protobuf  # noqa: F401
except ImportError as e:
    sys.exit(f"the Python worker cannot import google.protobuf ({e}): install python3-protobuf")
try:
    import pytest  # noqa: F401
except ImportError as e:
    sys.exit(f"the Python tests cannot import pytest ({e}): install python3-pytest")
try:
    import numpy  # noqa: F401
except ImportError as e:
    sys.exit(f"the memory-daemon benchmark's functions cannot import numpy ({e}): install python3-numpy")
try:
    import pandas  # noqa: F401
except ImportError as e:
    sys.exit(f"benchmarks/tools/trace_analysis.py cannot import pandas ({e}): install python3-pandas")
from faascache_worker import azure_functions, protos
azure_functions.ensure_available()
from faascache_worker import dispatcher  # noqa: F401  (imports the generated stubs and grpc.aio)
protos.load()
print("faascache_worker.dispatcher and the generated stubs import")
PY
}

node_worker_loads() {
    (cd "$root/src/Workers/node" && node -e '
const mmap = require("mmap-io");
require("@grpc/grpc-js");
require("@grpc/proto-loader");
const s = require("./lib/sharedMemory");
if (s.mode !== "mmap") { console.error("shared-memory mode is " + s.mode + ": " + s.modeReason); process.exit(1); }
console.log("mmap-io " + require("mmap-io/package.json").version + " loads; shared-memory inputs: " + s.mode);')
}

azurite_answers() {
    # shellcheck source=scripts/lib/azurite.sh
    source "$root/scripts/lib/azurite.sh"
    start_azurite >/dev/null || return 1
    local code
    code="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$AZURITE_PORT/devstoreaccount1?comp=list" || true)"
    local version
    version="$(node -p "require('$root/node_modules/azurite/package.json').version")"
    stop_azurite
    # An unsigned request is refused (403): that is an answer from a live blob service.
    [[ "$code" =~ ^[0-9]{3}$ && "$code" != 000 ]] || { echo "Azurite did not answer an HTTP request (got '$code')"; return 1; }
    echo "azurite $version started and answered HTTP $code"
}

network_emulation_works() {
    # What NetworkNamespace.CreateAsync does, on names of its own: a namespace, a veth pair, tbf on the root end and its
    # ingress redirected through an ifb device; then removed. netem (delay, loss) is reported, not required.
    [ "$(id -u)" -eq 0 ] || { echo "network namespaces and tc need root (uid $(id -u))"; return 1; }
    local ns="fcsetup-$$" a="fcs$$a" b="fcs$$b" i="fcs$$i" rc=0 netem="missing (kernel without CONFIG_NET_SCH_NETEM: no delay or loss)"
    ip netns add "$ns" &&
        ip link add "$a" type veth peer name "$b" &&
        ip link set "$b" netns "$ns" &&
        ip link set "$a" up && ip -n "$ns" link set "$b" up &&
        ip link add "$i" type ifb && ip link set "$i" up &&
        tc qdisc add dev "$a" root tbf rate 720mbit burst 270000 latency 50ms &&
        tc qdisc add dev "$a" handle ffff: ingress &&
        tc filter add dev "$a" parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev "$i" &&
        tc qdisc add dev "$i" root tbf rate 720mbit burst 270000 latency 50ms || rc=1
    if [ $rc -eq 0 ] && tc qdisc replace dev "$i" root netem delay 1ms 2>/dev/null; then netem="available"; fi
    ip link del "$a" 2>/dev/null || true
    ip link del "$i" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    [ $rc -eq 0 ] || return 1
    echo "ip netns, a veth pair and tc tbf both ways (ingress via ifb) work; netem $netem"
}

solution_restores() {
    dotnet restore "$root/FaaSCache.sln" --verbosity quiet -nologo && echo "FaaSCache.sln restored"
}

run_checks() {
    local started=$SECONDS
    say "checking that each runtime piece works"
    check "protoc builds the Python worker's FunctionRpc stubs" "$(fix_for protobuf-compiler protobuf-compiler-grpc libprotobuf-dev python3-grpcio python3-protobuf)" \
        bash -c "cd '$root/src/Workers/python' && /usr/bin/python3 -m faascache_worker.protos --verify"
    check "the Python worker imports" "$(fix_for python3 python3-grpcio python3-protobuf python3-pytest python3-numpy python3-pandas)" python_worker_imports
    check "the Node worker loads mmap-io and gRPC" "bash scripts/setup.d/node-worker.sh (npm ci in src/Workers/node; mmap-io builds with $(fix_for g++ make))" node_worker_loads
    check "Azurite starts and answers" "npm ci in $root (azurite@3.35.0) and $(fix_for curl)" azurite_answers
    check "redis-server runs" "$(fix_for redis-server)" redis-server --version
    check "ip netns and tc shape a veth link" "$(fix_for iproute2) and run as root" network_emulation_works
    check "nft and iperf3 run" "$(fix_for nftables iperf3)" bash -c 'nft list tables >/dev/null && nft --version && iperf3 --version | head -n 1'
    check "podman, runc, mmdebstrap and catatonit run" "$(fix_for podman runc mmdebstrap catatonit)" bash -c 'podman --version && runc --version | head -n 1 && mmdebstrap --version && catatonit --version'
    check "the .NET solution restores" "dotnet restore FaaSCache.sln (needs the .NET 10 SDK and the NuGet feed)" solution_restores
    if [ "$failures" -gt 0 ]; then
        say "$failures check(s) failed (in $((SECONDS - started)) s): the demo and the tests would fail; fix the above and run again"
        return 1
    fi
    say "all checks passed in $((SECONDS - started)) s"
}

if [ "$mode" = install ]; then
    install
fi
run_checks
[ "$mode" = check ] || say "ready"
