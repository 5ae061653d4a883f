#!/usr/bin/env bash
# The whole game with no hardware: two Bumble virtual controllers on one link,
# our peripheral on one, our central on the other, three questions.
# Installs what is missing, builds, and cleans up every process it started.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "demo: building itcb-dongle…"
swift build -q 2>&1 | grep -v "^\[" || true
bin=.build/debug/itcb-dongle
[ -x "$bin" ] || { echo "demo: build failed"; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    sleep 0.5
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Two virtual controllers on free loopback ports (the script prints "PORTS p1 p2").
.venv/bin/python Tests/Support/controllers.py 2 > "$work/controllers.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^PORTS' "$work/controllers.log" && break; sleep 0.1; done
read -r _ p1 p2 < <(grep '^PORTS' "$work/controllers.log") || { echo "demo: controllers did not start"; cat "$work/controllers.log"; exit 1; }

"$bin" --role peripheral --transport "tcp:127.0.0.1:$p1" --name Demo8 --answers slug > "$work/peripheral.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q 'advertising' "$work/peripheral.log" && break; sleep 0.1; done

echo "demo: our central asks our peripheral three questions over two Bumble virtual controllers"
status=0
timeout 60 "$bin" --role central --transport "tcp:127.0.0.1:$p2" --peer Demo8 --log-level warning \
    --question "Will the demo work?" \
    --question "Is Swift a good language for firmware?" \
    --question "Should I plug in a real dongle?" || status=$?
echo "demo: central exited with $status; the peripheral's log:"
sed 's/^/  /' "$work/peripheral.log"
exit $status
