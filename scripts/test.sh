#!/usr/bin/env bash
# Runs every test of the project: .NET (xunit), Python worker (pytest), Node worker (node --test).
# Each suite prints its runner's summary; the last line sums them up.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh || exit 1

failed_suites=()
echo "== .NET tests =="
dotnet build FaaSCache.sln -c Debug --verbosity quiet -nologo || failed_suites+=("dotnet build")
if [[ ! " ${failed_suites[*]} " =~ " dotnet build " ]]; then
    dotnet test FaaSCache.sln --no-build --verbosity quiet -nologo || failed_suites+=(dotnet)
fi

if [ -d src/Workers/python/tests ]; then
    echo "== Python worker tests =="
    /usr/bin/python3 -m pytest src/Workers/python/tests -q -p no:cacheprovider || failed_suites+=(python)
fi

if [ -d src/Workers/node/test ]; then
    echo "== Node worker tests =="
    (cd src/Workers/node && node --test test/) || failed_suites+=(node)
fi

if [ ${#failed_suites[@]} -gt 0 ]; then
    echo "FAILED suites: ${failed_suites[*]}"
    exit 1
fi
echo "All suites passed."
