#!/usr/bin/env bash
# Seeds the AMBER Alert sample's blobs with the faascache tool's `blob put`:
#   models/bounding-box.bin  35 MiB (36,700,160 bytes)   random bytes: the paper's 35 MB bounding-box model
#   models/people.bin        97 MiB (101,711,872 bytes)  random bytes: the 97 MB people model
#   models/car.bin            5 MiB (5,242,880 bytes)    random bytes: the 5 MB car model
#   images/camera-{1..N}.ppm  N (default 2) 320x240 RGB PPM images, 230,415 bytes each: a dark street, bright shapes
# Sizes are MiB (2^20 bytes). Storage: --connection, else $AzureWebJobsStorage (e.g. Azurite's).
# usage: seed.sh [--images N] [--connection <storage connection string>] [--tool <faascache.dll>]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tool="${FAASCACHE_TOOL_DLL:-$root/src/Tools/FaaSCache.Tools/bin/Release/net10.0/faascache.dll}"
images=2
while [ $# -gt 0 ]; do
    case "$1" in
        --images) images="$2"; shift 2 ;;
        --connection) export AzureWebJobsStorage="$2"; shift 2 ;;
        --tool) tool="$2"; shift 2 ;;
        -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "seed.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -n "${AzureWebJobsStorage:-}" ] || { echo "seed.sh: set AzureWebJobsStorage or pass --connection" >&2; exit 2; }
[ -f "$tool" ] || { echo "seed.sh: $tool not found (dotnet build src/Tools/FaaSCache.Tools -c Release)" >&2; exit 2; }

work="$(mktemp -d /tmp/faascache-amber-seed.XXXXXX)"
trap 'rm -rf "$work"' EXIT

put() {  # put <container/blob> <file>
    local etag
    etag="$(dotnet "$tool" blob put "$1" "$2")"
    printf '[seed] %-26s %13s bytes  %s\n' "$1" "$(stat -c %s "$2" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" "$etag"
}

for model in bounding-box:35 people:97 car:5; do
    head -c "$(( ${model#*:} * 1024 * 1024 ))" /dev/urandom >"$work/${model%:*}.bin"
    put "models/${model%:*}.bin" "$work/${model%:*}.bin"
done

python3 - "$work" "$images" <<'PY'
import random, sys
work, count = sys.argv[1], int(sys.argv[2])
W, H = 320, 240
for n in range(1, count + 1):
    rnd = random.Random(n)
    rows = []
    for y in range(H):  # a dark street: a vertical gradient with some noise
        base = 20 + y * 40 // H
        rows.append(bytearray(bytes(max(0, min(255, base + rnd.randint(-8, 8))) for _ in range(W * 3))))
    for _ in range(rnd.randint(2, 4)):  # bright shapes: people (tall) and cars (wide)
        tall = rnd.random() < 0.5
        w, h = (rnd.randint(16, 40), rnd.randint(48, 96)) if tall else (rnd.randint(64, 120), rnd.randint(32, 56))
        x, y = rnd.randint(0, W - w), rnd.randint(0, H - h)
        colour = bytes(rnd.randint(150, 255) for _ in range(3))
        for yy in range(y, y + h):
            rows[yy][x * 3:(x + w) * 3] = colour * w
    with open(f"{work}/camera-{n}.ppm", "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (W, H) + b"".join(rows))
PY
for n in $(seq 1 "$images"); do
    put "images/camera-$n.ppm" "$work/camera-$n.ppm"
done
