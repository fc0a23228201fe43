#!/usr/bin/env bash
# Seeds the thumbnail sample's blobs with the faascache tool's `blob put`:
#   photos/photo-{1..N}.ppm  N (default 2) 1024x1365 RGB PPM photos, 4,193,297 bytes each (4.0 MiB)
# Storage: --connection, else $AzureWebJobsStorage (e.g. Azurite's).
# usage: seed.sh [--photos N] [--connection <storage connection string>] [--tool <faascache.dll>]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tool="${FAASCACHE_TOOL_DLL:-$root/src/Tools/FaaSCache.Tools/bin/Release/net10.0/faascache.dll}"
photos=2
while [ $# -gt 0 ]; do
    case "$1" in
        --photos) photos="$2"; shift 2 ;;
        --connection) export AzureWebJobsStorage="$2"; shift 2 ;;
        --tool) tool="$2"; shift 2 ;;
        -h|--help) sed -n '2,5p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "seed.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -n "${AzureWebJobsStorage:-}" ] || { echo "seed.sh: set AzureWebJobsStorage or pass --connection" >&2; exit 2; }
[ -f "$tool" ] || { echo "seed.sh: $tool not found (dotnet build src/Tools/FaaSCache.Tools -c Release)" >&2; exit 2; }

work="$(mktemp -d /tmp/faascache-thumbnail-seed.XXXXXX)"
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$photos" <<'PY'
import random, sys
work, count = sys.argv[1], int(sys.argv[2])
W, H = 1024, 1365
for n in range(1, count + 1):
    rnd = random.Random(100 + n)
    sky, ground = [rnd.randint(60, 200) for _ in range(3)], [rnd.randint(20, 120) for _ in range(3)]
    rows = []
    for y in range(H):  # a sky-to-ground gradient
        t = y / (H - 1)
        rows.append(bytearray(bytes(int(s + (g - s) * t) for s, g in zip(sky, ground)) * W))
    for _ in range(rnd.randint(3, 6)):  # and a few coloured blocks
        w, h = rnd.randint(80, 400), rnd.randint(80, 400)
        x, y = rnd.randint(0, W - w), rnd.randint(0, H - h)
        colour = bytes(rnd.randint(0, 255) for _ in range(3)) * w
        for yy in range(y, y + h):
            rows[yy][x * 3:(x + w) * 3] = colour
    with open(f"{work}/photo-{n}.ppm", "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (W, H) + b"".join(rows))
PY
for n in $(seq 1 "$photos"); do
    etag="$(dotnet "$tool" blob put "photos/photo-$n.ppm" "$work/photo-$n.ppm")"
    printf '[seed] %-22s %13s bytes  %s\n' "photos/photo-$n.ppm" "$(stat -c %s "$work/photo-$n.ppm" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" "$etag"
done
