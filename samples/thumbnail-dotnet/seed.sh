#!/usr/bin/env bash
# Seeds the thumbnail sample's blobs: the same photos/photo-{1..N}.ppm as samples/thumbnail-node, by its seed.sh.
# usage: seed.sh [--photos N] [--connection <storage connection string>] [--tool <faascache.dll>]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../thumbnail-node/seed.sh" "$@"
