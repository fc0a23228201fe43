#!/usr/bin/env bash
# One command from a fresh machine: set up, then
#   part 1: run the AMBER Alert pipeline in the Python v2 programming model (samples/amber-alert-v2: one
#           function_app.py with decorators, indexed by the worker; a 35 MiB bounding-box model, then a 97 MiB
#           people model and a 5 MiB car model fired by the labelled image) on the FaaSCache host with the
#           cache: the first request misses, later ones hit with 0 bytes copied, the downstream stages
#           fire from the cache write (scripts/run-sample.sh amber-alert-v2 --requests 3);
#   part 2: a short tour of what the sample does not show: another client's write detected by the strong
#           version check, and a doNotCache blob (the faascache tool's `demo` command, samples/demo/host.json).
# Everything it starts (Azurite, host, workers) is stopped on exit, on failure and on Ctrl+C too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh

printf '\n== Part 1: the AMBER Alert pipeline (Python v2 model) on the FaaSCache host (scripts/run-sample.sh amber-alert-v2 --requests 3) ==\n\n'
bash scripts/run-sample.sh amber-alert-v2 --requests 3

printf '\n== Part 2: the cachelet on its own: strong reads see other writers, doNotCache bypasses (faascache demo) ==\n\n'
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/azurite.sh
source scripts/lib/azurite.sh
shm_folders_note
trap 'stop_azurite; shm_folders_tidy' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_azurite
# Part 1 built the host and the faascache tool.
dotnet src/Tools/FaaSCache.Tools/bin/Release/net10.0/faascache.dll demo \
    --connection "$AZURITE_CONNECTION" --host-json samples/demo/host.json
