#!/usr/bin/env bash
# Seeds the blobs of the AMBER Alert v2 sample: the same models and images as samples/amber-alert (its seed.sh,
# which takes the same arguments: [--images N] [--connection <storage connection string>] [--tool <faascache.dll>]).
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../amber-alert/seed.sh" "$@"
