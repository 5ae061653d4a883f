#!/usr/bin/env bash
# The whole game with no hardware: two Bumble virtual controllers on one link,
# our peripheral on one, our central on the other, three questions.
# Installs only what the demo needs and is missing (scripts/setup.sh --demo:
# libusb's dev package, pkg-config, python3-venv, the .venv with Bumble), builds
# (the compiler's output goes to a log file, not between the answers), and
# stops every process it started. Ctrl-C stops
# it at once, quietly, with exit status 130.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
controllers=  # the virtual controllers' pid: stopped after the programs that use them
stop() {  # stop PID...: TERM, up to 0.5 s to exit, then KILL
    (($#)) || return 0
    kill -TERM "$@" 2>/dev/null || true
    for _ in 1 2 3 4 5; do
        kill -0 "$@" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$@" 2>/dev/null || true
}
cleanup() {
    # Every job still running, not only those recorded: a Ctrl-C in the instant
    # the central is started can reach the script but not the central (bash
    # ignores SIGINT in a background child until it execs). Ours first, the
    # controllers last, so that no program of ours sees its controller go first
    # and reports it as a failure.
    local ours=() pid
    for pid in $(jobs -p); do [ "$pid" = "$controllers" ] || ours+=("$pid"); done
    stop "${ours[@]}"
    stop $controllers
    rm -rf "$work"
}
stopped() {  # stopped STATUS: Ctrl-C (130) or SIGTERM (143)
    trap - EXIT INT TERM
    # Quietly: this trap runs inside the script's `wait`, and bash itself may
    # then say "wait_for: No record of process N" of a child the clean-up ran
    # (CI on da8a33d; every process was stopped all the same). The clean-up's
    # own commands print nothing.
    cleanup 2>/dev/null
    exit "$1"
}
trap cleanup EXIT
trap 'stopped 130' INT
trap 'stopped 143' TERM

scripts/setup.sh --demo
mkdir -p .build-embedded
log=.build-embedded/demo-build.log
bin=.build-embedded/itcb-dongle  # the binary that ships (Embedded Swift)
if [ -x "$bin" ]; then
    echo "demo: building itcb-dongle (scripts/build-embedded.sh; log: $log)…"
else
    echo "demo: building itcb-dongle (scripts/build-embedded.sh; the first build takes a few minutes; log: $log)…"
fi
# In the background with `wait`, so that Ctrl-C is handled at once.
scripts/build-embedded.sh > "$log" 2>&1 &
build=$!
if ! wait "$build"; then
    grep -E "error:" "$log" | head -n 20 || tail -n 20 "$log"
    echo "demo: build failed; the whole output is in $log"
    exit 1
fi
[ -x "$bin" ] || { echo "demo: build failed (no $bin)"; exit 1; }

# Two virtual controllers on free loopback ports (the script prints "PORTS p1 p2").
.venv/bin/python Tests/PythonSupport/controllers.py 2 > "$work/controllers.log" 2>&1 &
controllers=$!
for _ in $(seq 100); do grep -q '^PORTS' "$work/controllers.log" && break; sleep 0.1; done
read -r _ p1 p2 < <(grep '^PORTS' "$work/controllers.log") || { echo "demo: controllers did not start"; cat "$work/controllers.log"; exit 1; }

"$bin" --role peripheral --transport "tcp:127.0.0.1:$p1" --name "Demo 8-Ball" --answers slug > "$work/peripheral.log" 2>&1 &
for _ in $(seq 100); do grep -q 'advertising' "$work/peripheral.log" && break; sleep 0.1; done

echo "demo: our central asks our peripheral three questions over two Bumble virtual controllers"
# In the background with `wait` as well: the INT trap runs at once, not after the
# central. Started directly (no timeout(1) between: its --timeout bounds each
# question), so that the cleanup's TERM reaches the central itself.
"$bin" --role central --transport "tcp:127.0.0.1:$p2" --peer "Demo 8-Ball" \
    --question "Will the demo work?" \
    --question "Is Swift a good language for firmware?" \
    --question "Should I plug in a real dongle?" &
central=$!
status=0
wait "$central" || status=$?
echo "demo: central exited with $status; the peripheral's log:"
sed 's/^/  /' "$work/peripheral.log"
exit $status
