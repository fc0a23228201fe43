#!/usr/bin/env bash
# Installs the Node worker's dependencies (src/Workers/node): @grpc/grpc-js, @grpc/proto-loader and mmap-io.
# mmap-io 1.1.7 compiles against Node 20's headers only as C++17, hence CXXFLAGS=-std=gnu++17 (without it the
# build fails on a fresh machine). It is an optional dependency: if it cannot build, the worker still runs and
# reads shared-memory inputs with one read instead of mapping them; the last line says which mode is in force.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="$root/src/Workers/node"
say() { printf '[setup] node worker: %s\n' "$*"; }

if [ ! -d "$dir/node_modules/@grpc/grpc-js" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "npm ci in src/Workers/node (CXXFLAGS=-std=gnu++17 for mmap-io)"
    (cd "$dir" && CXXFLAGS="${CXXFLAGS:+$CXXFLAGS }-std=gnu++17" npm ci --no-audit --no-fund --loglevel=error)
else
    say "dependencies present"
fi
mode="$(cd "$dir" && node -e "const s = require('./lib/sharedMemory'); process.stdout.write(s.mode + ' (' + s.modeReason + ')')")"
say "shared-memory inputs: $mode"
