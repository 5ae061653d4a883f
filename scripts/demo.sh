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
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in 1 2 3 4 5; do
        alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        ((alive)) || break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
stopped() {  # stopped STATUS: Ctrl-C (130) or SIGTERM (143)
    trap - EXIT INT TERM
    cleanup
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
pids+=("$build")
if ! wait "$build"; then
    grep -E "error:" "$log" | head -n 20 || tail -n 20 "$log"
    echo "demo: build failed; the whole output is in $log"
    exit 1
fi
[ -x "$bin" ] || { echo "demo: build failed (no $bin)"; exit 1; }

# Two virtual controllers on free loopback ports (the script prints "PORTS p1 p2").
.venv/bin/python Tests/PythonSupport/controllers.py 2 > "$work/controllers.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^PORTS' "$work/controllers.log" && break; sleep 0.1; done
read -r _ p1 p2 < <(grep '^PORTS' "$work/controllers.log") || { echo "demo: controllers did not start"; cat "$work/controllers.log"; exit 1; }

"$bin" --role peripheral --transport "tcp:127.0.0.1:$p1" --name "Demo 8-Ball" --answers slug > "$work/peripheral.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q 'advertising' "$work/peripheral.log" && break; sleep 0.1; done

echo "demo: our central asks our peripheral three questions over two Bumble virtual controllers"
# In the background with `wait` as well: the INT trap runs at once, not after the central.
# --foreground keeps the central in this process group: without it timeout moves
# to a group of its own, Ctrl-C reaches the controllers but not the central, and
# the central reads their closed sockets as a failure before our TERM arrives.
timeout --foreground 60 "$bin" --role central --transport "tcp:127.0.0.1:$p2" --peer "Demo 8-Ball" \
    --question "Will the demo work?" \
    --question "Is Swift a good language for firmware?" \
    --question "Should I plug in a real dongle?" &
central=$!
pids+=("$central")
status=0
wait "$central" || status=$?
echo "demo: central exited with $status; the peripheral's log:"
sed 's/^/  /' "$work/peripheral.log"
exit $status
