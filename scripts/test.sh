#!/usr/bin/env bash
# The one test command (README "Tests"; .ci/run calls it): installs what is
# missing, builds, and runs every suite. Exits non-zero if any suite fails.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || { echo "test: setup failed"; exit 1; }

passed=0
failed=0
failures=()
suite() {
    local name=$1
    shift
    echo
    echo "=== $name: $*"
    local start=$SECONDS
    if "$@"; then
        passed=$((passed + 1))
        echo "=== $name: ok ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "=== $name: FAILED ($((SECONDS - start)) s)"
    fi
}

suite "build" swift build --build-tests
suite "unit tests (Swift Testing)" swift test --skip-build
suite "embedded core (-no-allocations)" scripts/embedded-check.sh
suite "fuzzing the core (libFuzzer + ASan, 30 s)" scripts/fuzz.sh 30
suite "interop with Bumble" .venv/bin/python -m pytest -q -p no:cacheprovider Tests/Interop
suite "central role with Bumble" .venv/bin/python -m pytest -q -p no:cacheprovider Tests/Central
suite "appliance lifecycle with Bumble" .venv/bin/python -m pytest -q -p no:cacheprovider Tests/Lifecycle
for extra in Tests/USBFixture/run-tests.sh Tests/Deployment/test_deployment.sh; do
    [ -x "$extra" ] && suite "$(basename "$(dirname "$extra")")" "$extra"
done

echo
((failed)) && echo "test: failed suites: ${failures[*]}"
echo "test: $passed passed, $failed failed"
((failed == 0))
