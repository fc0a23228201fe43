#!/usr/bin/env bash
# Installs everything FaaSCache needs on a fresh Debian machine; safe to run again (it skips what is there).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '[setup] %s\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian packages, each named (installed with --no-install-recommends, so nothing comes along unasked):
#   redis-server                        the Redis rows of the benchmarks and TestSupport's RedisServer
#   python3 python3-grpcio python3-protobuf python3-pytest   the Python worker, its runtime and its tests
#   protobuf-compiler protobuf-compiler-grpc                  protoc and grpc_python_plugin for the worker's stubs
#   libprotobuf-dev                     google/protobuf/*.proto (FunctionRpc.proto imports duration.proto)
#   g++ make                            node-gyp builds the Node worker's mmap-io
apt_packages=(redis-server python3 python3-grpcio python3-protobuf python3-pytest protobuf-compiler
    protobuf-compiler-grpc libprotobuf-dev g++ make)
missing=()
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
# The package starts a system redis on 6379 where systemd runs; FaaSCache starts its own on free ports.

# Node tooling: Azurite pinned to 3.35.0 (the last release that runs on Node 20).
if [ ! -x node_modules/.bin/azurite-blob ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci (azurite@3.35.0)"
    npm ci --no-audit --no-fund --loglevel=error
else
    say "azurite $(node -p "require('./node_modules/azurite/package.json').version") present"
fi

for extra in scripts/setup.d/*.sh; do
    [ -e "$extra" ] || continue
    say "running $extra"
    bash "$extra"
done

say "dotnet restore"
dotnet restore FaaSCache.sln --verbosity quiet
say "ready"
