#!/usr/bin/env bash
# One command from a fresh machine: set up, start Azurite, run the cache demo, stop Azurite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
# shellcheck source=scripts/azurite.sh
source scripts/azurite.sh
trap stop_azurite EXIT INT TERM
start_azurite
dotnet build src/Host.Cache/FaaSCache.Host -c Release --verbosity quiet -nologo
dotnet src/Host.Cache/FaaSCache.Host/bin/Release/net10.0/FaaSCache.Host.dll demo \
    --connection "$AZURITE_CONNECTION" --host-json samples/demo/host.json
