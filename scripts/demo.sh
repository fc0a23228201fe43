#!/usr/bin/env bash
# One command from a fresh machine: set up, then
#   part 1: run the AMBER Alert pipeline (samples/amber-alert: a 35 MiB bounding-box model, then a 97 MiB
#           people model and a 5 MiB car model fired by the labelled image) on the FaaSCache host with the
#           cache: the first request misses, later ones hit with 0 bytes copied, the downstream stages
#           fire from the cache write (scripts/run-sample.sh amber-alert --requests 3);
#   part 2: a short tour of what the sample does not show: another client's write detected by the strong
#           version check, and a doNotCache blob (the host's `demo` command, samples/demo/host.json).
# Everything it starts (Azurite, host, workers) is stopped on exit, on failure and on Ctrl+C too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh

printf '\n== Part 1: the AMBER Alert pipeline on the FaaSCache host (scripts/run-sample.sh amber-alert --requests 3) ==\n\n'
bash scripts/run-sample.sh amber-alert --requests 3

printf '\n== Part 2: the cachelet on its own: strong reads see other writers, doNotCache bypasses (host demo command) ==\n\n'
# shellcheck source=scripts/azurite.sh
source scripts/azurite.sh
trap stop_azurite EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_azurite
# Part 1 built the host. The demo prints its effective options first (samples/demo/host.json with the
# defaults filled in, a 30-line JSON block): shown here as one line; the rest passes unchanged.
dotnet src/Host.Cache/FaaSCache.Host/bin/Release/net10.0/FaaSCache.Host.dll demo \
    --connection "$AZURITE_CONNECTION" --host-json samples/demo/host.json \
    | python3 -u -c '
import json, sys
held = None
for line in sys.stdin:
    if held is None and line.startswith("Effective options"):
        held = [line]
        continue
    if held:
        held.append(line)
        try:
            o = json.loads("".join(held[1:]))
        except ValueError:
            if len(held) > 80:
                sys.stdout.write("".join(held)); held = []
            continue
        title = held[0].strip().rstrip(":")
        mib = o["effectiveCapacityBytes"] // 2**20
        print(title + ": consistency " + o["consistency"] + ", persist " + o["effectivePersist"] + ", eviction "
              + o["eviction"]["policy"] + f", capacity {mib} MiB, doNotCache " + ", ".join(o["doNotCache"]))
        held = []
        continue
    sys.stdout.write(line)
if held:
    sys.stdout.write("".join(held))
'
