#!/usr/bin/env bash
# Installs the faascache .NET tool (src/Tools/FaaSCache.Tools, PackAsTool) into .artifacts/bin, so that an app is
# run from its own folder as with Core Tools' `func start`:   cd samples/amber-alert-v2 && faascache start
# It packs the tool (with the host and its language workers inside: workers/<language>/ beside faascache.dll) into
# .artifacts/tools/faascache.<version>.nupkg and installs or updates it with `dotnet tool install --tool-path
# .artifacts/bin`, from that folder only. Each pack gets a version of its own (0.1.0-local.<UTC time>), so an update
# never reuses an older package's files. It packs again only when the tool is missing or a source under src/ (or the
# repository's Directory.*.props, or the Node worker's installed dependencies) is newer than the last pack.
# usage: faascache-tool.sh [--force]   (--force: pack and install again)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
say() { printf '[setup] faascache tool: %s\n' "$*"; }

force=0
case "${1:-}" in
    "") ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown option '$1' (allowed: --force)" >&2; exit 2 ;;
esac
command -v dotnet >/dev/null || { say "dotnet not found (install the .NET 10 SDK)"; exit 1; }

packages="$root/.artifacts/tools"
bin="$root/.artifacts/bin"
stamp="$packages/faascache.stamp"
mkdir -p "$packages" "$bin"

# The package carries the Node worker with its node_modules: install them first (setup.d runs in name order, and
# node-worker.sh comes after this script; it skips what is there).
if [ ! -d "$root/src/Workers/node/node_modules/@grpc/grpc-js" ]; then
    bash "$root/scripts/setup.d/node-worker.sh"
fi

stale=$force
if [ ! -x "$bin/faascache" ] || [ ! -f "$stamp" ]; then
    stale=1
elif [ -n "$(find "$root/src" \( -name bin -o -name obj -o -name node_modules -o -name __pycache__ -o -name _generated -o -name .pytest_cache \) -prune \
        -o -type f -newer "$stamp" -print -quit)" ] \
    || [ "$root/Directory.Packages.props" -nt "$stamp" ] || [ "$root/Directory.Build.props" -nt "$stamp" ] \
    || [ "$root/src/Workers/node/node_modules/.package-lock.json" -nt "$stamp" ]; then
    stale=1
fi

if [ "$stale" -eq 1 ]; then
    version="0.1.0-local.$(date -u +%Y%m%d%H%M%S)"
    say "dotnet pack src/Tools/FaaSCache.Tools -c Release (version $version) into ${packages#"$root"/}"
    rm -f "$packages"/faascache.*.nupkg
    log="$(mktemp /tmp/faascache-tool-pack.XXXXXX)"
    # PackageVersion, not Version: the referenced projects' assemblies stay as the Release build made them.
    if ! dotnet pack "$root/src/Tools/FaaSCache.Tools" -c Release -o "$packages" -p:PackageVersion="$version" -nologo --verbosity quiet >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        rm -f "$log"
        say "the pack failed (output above)"
        exit 1
    fi
    rm -f "$log"
    # Only this folder as a package source: the tool is nobody else's, no registry is asked for it.
    cat >"$packages/nuget.config" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="faascache-local" value="$packages" />
  </packageSources>
</configuration>
EOF
    if [ -x "$bin/faascache" ]; then
        verb=update done_word=updated
    else
        verb=install done_word=installed
    fi
    if ! out="$(cd "$packages" && dotnet tool "$verb" --tool-path "$bin" faascache --version "$version" --configfile "$packages/nuget.config" 2>&1)"; then
        printf '%s\n' "$out" >&2
        say "dotnet tool $verb failed (output above)"
        exit 1
    fi
    touch "$stamp"
    say "faascache $version ${done_word} in ${bin#"$root"/}"
else
    say "faascache present in ${bin#"$root"/} (no source newer than the last pack)"
fi
"$bin/faascache" --version >/dev/null || { say "$bin/faascache does not run"; exit 1; }
# The host in the tool finds the workers beside faascache.dll, in the tool's store folder.
find "$bin/.store/faascache" -path '*/tools/*/any/workers/python/worker.config.json' -print -quit | grep -q . \
    || { say "the installed tool lacks workers/python/worker.config.json beside faascache.dll"; exit 1; }
say "put it on PATH:  export PATH=\"$bin:\$PATH\"   then, in an app folder: faascache start [--port 7071]"
