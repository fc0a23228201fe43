#!/usr/bin/env bash
# Builds the repository's C# isolated worker apps (samples/thumbnail-dotnet, benchmarks/apps/dotnet-isolated, and any
# other folder whose *.csproj uses Microsoft.Azure.Functions.Worker.Sdk) in Release, as `func start` would before
# running them: the host runs a C# isolated app from its build output (worker.config.json, functions.metadata,
# extensions.json, .azurefunctions/, <App>.dll), not from its source folder. They are not in FaaSCache.sln (the
# Worker.Sdk's inner extensions build costs 15-40 s each), so this builds each one when its output is missing or older
# than its sources (*.cs, *.csproj, host.json, local.settings.json, the repository's Directory.*.props), and prints
# where the outputs are.
# usage: dotnet-apps.sh [--force]   (--force: build every app again)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
say() { printf '[setup] dotnet apps: %s\n' "$*"; }

force=0
case "${1:-}" in
    "") ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown option '$1' (allowed: --force)" >&2; exit 2 ;;
esac
command -v dotnet >/dev/null || { say "dotnet not found (install the .NET 10 SDK)"; exit 1; }

# The apps: project files that use the isolated worker's build SDK, outside build output and dependencies.
mapfile -t projects < <(cd "$root" && find . \( -name node_modules -o -name .git -o -name bin -o -name obj -o -name .artifacts \) -prune -o \
    -name '*.csproj' -print | sort | while read -r p; do grep -q 'Include="Microsoft.Azure.Functions.Worker.Sdk"' "$p" && echo "${p#./}"; done)
[ ${#projects[@]} -gt 0 ] || { say "no C# isolated app found"; exit 0; }

built=0 present=0
outputs=()
for project in "${projects[@]}"; do
    dir="$root/$(dirname "$project")"
    rel="$(dirname "$project")"
    # The output folder and assembly as MSBuild computes them (bin/Release/<tfm>/), not guessed from the file names.
    props="$(dotnet msbuild "$root/$project" -nologo -p:Configuration=Release -getProperty:TargetDir -getProperty:TargetFileName)"
    out="$(sed -n 's/.*"TargetDir": *"\([^"]*\)".*/\1/p' <<<"$props")"
    dll="$(sed -n 's/.*"TargetFileName": *"\([^"]*\)".*/\1/p' <<<"$props")"
    [ -n "$out" ] && [ -n "$dll" ] || { say "$rel: cannot read TargetDir/TargetFileName from MSBuild: $props"; exit 1; }
    out="${out%/}"
    marker="$out/functions.metadata"
    stale=$force
    if [ ! -f "$marker" ] || [ ! -f "$out/$dll" ] || [ ! -f "$out/worker.config.json" ]; then
        stale=1
    elif [ -n "$(find "$dir" \( -name bin -o -name obj \) -prune -o -type f \( -name '*.cs' -o -name '*.csproj' -o -name host.json -o -name local.settings.json \) -newer "$marker" -print -quit)" ] \
        || [ "$root/Directory.Packages.props" -nt "$marker" ] || [ "$root/Directory.Build.props" -nt "$marker" ]; then
        stale=1
    fi
    if [ "$stale" -eq 1 ]; then
        say "dotnet build $rel -c Release"
        log="$(mktemp /tmp/faascache-dotnet-app.XXXXXX)"
        if ! dotnet build "$root/$project" -c Release -nologo --verbosity quiet >"$log" 2>&1; then
            grep -v 'warning NU1603' "$log" | tail -n 30 >&2
            rm -f "$log"
            say "$rel: the build failed (output above)"
            exit 1
        fi
        rm -f "$log"
        # The build only rewrites functions.metadata when it changes: touch it so that the check above sees it is fresh.
        touch "$marker"
        built=$((built + 1))
    else
        present=$((present + 1))
    fi
    for f in worker.config.json functions.metadata extensions.json "$dll"; do
        [ -f "$out/$f" ] || { say "$rel: the build output $out lacks $f"; exit 1; }
    done
    outputs+=("$rel -> ${out#"$root"/}/ ($dll)")
done
say "${#projects[@]} app(s) built in Release ($built built, $present up to date); run one with the host's --script-root <output>:"
for o in "${outputs[@]}"; do say "  $o"; done
