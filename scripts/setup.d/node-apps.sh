#!/usr/bin/env bash
# Installs the dependencies of the repository's Node.js v4 programming model apps (samples, benchmark apps, the
# conformance app and the Node worker's test apps). A v4 app brings the @azure/functions library (pinned to 4.16.5
# in each app's package.json and package-lock.json) in its own node_modules, as a user's app does; the worker
# supplies only @azure/functions-core. An app folder is one with a package-lock.json next to a package.json that
# depends on @azure/functions; `npm ci` runs there when node_modules is missing or older than the lock.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
say() { printf '[setup] node apps: %s\n' "$*"; }

command -v npm >/dev/null || { say "npm not found (install Node.js 20 with npm)"; exit 1; }

mapfile -t locks < <(cd "$root" && find . \( -name node_modules -o -name .git -o -name bin -o -name obj \) -prune -o \
    -name package-lock.json -print | sort)
installed=0 present=0
for lock in "${locks[@]}"; do
    dir="$root/${lock#./}"
    dir="${dir%/package-lock.json}"
    [ -f "$dir/package.json" ] || continue
    node -e "const p = require(process.argv[1]); process.exit((p.dependencies || {})['@azure/functions'] ? 0 : 1)" \
        "$dir/package.json" || continue
    rel="${dir#"$root"/}"
    if [ ! -d "$dir/node_modules/@azure/functions" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        say "npm ci in $rel"
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
        installed=$((installed + 1))
    else
        present=$((present + 1))
    fi
    version="$(node -p 'require(process.argv[1]).version' "$dir/node_modules/@azure/functions/package.json")"
    [ "$version" = "4.16.5" ] || { say "$rel: @azure/functions $version installed, 4.16.5 expected"; exit 1; }
done
say "$((installed + present)) app(s) with @azure/functions 4.16.5 ($installed installed, $present already present)"
