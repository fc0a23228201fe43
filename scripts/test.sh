#!/usr/bin/env bash
# Runs every test of the project: .NET (xunit), Python worker (pytest), Node worker (node --test), and the linters.
# First the set-up (scripts/setup.sh): it installs what is missing and ends with its checks (setup.sh --check),
# so a missing install step fails here in seconds, naming the package, instead of as test failures.
# Each suite prints its runner's summary; the last line sums them up.
#
# usage: scripts/test.sh          everything: unit, integration (Azurite, real processes) and cluster tests
#        scripts/test.sh --fast   the unit tier: .NET tests with [Trait("Category", "Unit")] (no server, no child
#                                 process), the linters and both workers' suites; checks the set-up, installs nothing
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fast=0
case "${1:-}" in
    "") ;;
    --fast) fast=1 ;;
    -h|--help) sed -n '6,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/test.sh: unknown option '$1' (allowed: --fast)" >&2; exit 2 ;;
esac
started=$SECONDS
if [ "$fast" -eq 1 ]; then
    echo "== set-up check (scripts/setup.sh --check) =="
    bash scripts/setup.sh --check || { echo "FAILED: the set-up's checks (above) name what is missing: run bash scripts/setup.sh"; exit 1; }
else
    echo "== set-up and its checks (scripts/setup.sh) =="
    bash scripts/setup.sh || { echo "FAILED: the set-up's checks (above) name what is missing"; exit 1; }
fi

failed_suites=()
echo "== .NET tests =="
dotnet build FaaSCache.sln -c Debug --verbosity quiet -nologo || failed_suites+=("dotnet build")
if [[ ! " ${failed_suites[*]} " =~ " dotnet build " ]]; then
    filter=()
    [ "$fast" -eq 0 ] || filter=(--filter "Category=Unit")
    tests_started=$SECONDS
    # One test assembly at a time (-m:1): the cluster, controller and namespace suites each start several host
    # processes; run side by side on 2 cores their timing-sensitive steps (failure timeouts, drains) starved each other.
    # The log is kept so that the last lines of a failing run name the failed tests (CI shows only the tail).
    dotnet_log="$(mktemp /tmp/faascache-dotnet-test.XXXXXX.log)"
    dotnet test FaaSCache.sln --no-build --verbosity quiet -nologo -m:1 --logger "console;verbosity=minimal" "${filter[@]}" 2>&1 | tee "$dotnet_log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed_suites+=(dotnet)
    echo ".NET tests ran in $((SECONDS - tests_started)) s"
fi

echo "== Lint: flake8 (Python worker), tsc --checkJs (Node worker) =="
lint_failed=0
(cd src/Workers/python && /usr/bin/python3 -m flake8 && echo "flake8: no findings") || lint_failed=1
(cd src/Workers/node && npm run --silent lint && echo "tsc: no findings") || lint_failed=1
[ "$lint_failed" -eq 0 ] || failed_suites+=(lint)

if [ -d src/Workers/python/tests ]; then
    echo "== Python worker tests =="
    /usr/bin/python3 -m pytest src/Workers/python/tests -q -p no:cacheprovider || failed_suites+=(python)
fi

if [ -d src/Workers/node/test ]; then
    echo "== Node worker tests =="
    (cd src/Workers/node && node --test test/) || failed_suites+=(node)
fi

elapsed="$((SECONDS - started)) s"
if [ -n "${dotnet_log:-}" ]; then
    if [[ " ${failed_suites[*]} " =~ " dotnet " ]]; then
        echo "== .NET tests that failed (from $dotnet_log) =="
        # The per-assembly summary, then each failed test with the first lines of its message and where it failed (CI
        # shows only the last lines, so these come last and the tests' own output is left out).
        grep -E '^(Failed|Passed)!|Test Run Aborted|exited with error' "$dotnet_log" | tail -20
        awk '
            /^[[:space:]]*Failed [A-Za-z_]/ { print; state = ""; next }
            /^[[:space:]]*Error Message:/ { state = "message"; lines = 0; next }
            /^[[:space:]]*Stack Trace:/ { state = (state == "message") ? "stack" : ""; lines = 0; next }
            /^[[:space:]]*Standard (Output|Error) Messages:/ { state = ""; next }
            state == "message" && lines < 6 { print; lines++ }
            state == "stack" && /^[[:space:]]*at / && / in \// && lines < 3 { print; lines++ }
        ' "$dotnet_log" | tail -60
    fi
    rm -f "$dotnet_log"
fi
if [ ${#failed_suites[@]} -gt 0 ]; then
    echo "FAILED suites: ${failed_suites[*]} (after $elapsed)"
    exit 1
fi
echo "All suites passed in $elapsed."
