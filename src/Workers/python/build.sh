#!/usr/bin/env bash
# Generates the FunctionRpc Python code from src/Protos (the worker also does this at start-up when
# the generated code is missing or stale). Needs Debian's protobuf-compiler, protobuf-compiler-grpc,
# python3-grpcio and python3-protobuf.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${FAASCACHE_PYTHON:-/usr/bin/python3}"
exec "$PYTHON" -m faascache_worker.protos
