#!/usr/bin/env bash
# The one test command (README "Tests"; .ci/run calls it): installs what is
# missing, builds, and runs every suite. Exits non-zero if any suite fails.
# Ends with a table: each suite, its result and how long it took. Suites that
# share no resource run side by side on two lanes besides the main one: the
# caches a fresh machine lacks (debootstrapped roots, the guest's kernel,
# firmware packages) beside the builds, and the QEMU guests (USB, BlueZ) beside
# everything after the shipped binary's build.
#
# Usage: scripts/test.sh [--fast]
#   --fast  the daily loop on a built tree (docs/TESTING.md): the builds, the
#           unit tests and the TCP interop suites with Bumble (peripheral,
#           central); no set-up, benches, firmware, fuzzing or QEMU guests
set -uo pipefail
cd "$(dirname "$0")/.."
fast=0
case "${1:-}" in
    "") ;;
    --fast) fast=1 ;;
    *) echo "test: unknown option $1 (usage: scripts/test.sh [--fast])" >&2; exit 2 ;;
esac

# Each suite's result, whichever lane ran it: "result seconds name" lines.
logs=$(mktemp -d "${TMPDIR:-/tmp}/itcb-test.XXXXXX")
results=$logs/results
: > "$results"
began=$SECONDS
lane_pids=()
lane_names=()
niceness=()  # what runs beside the QEMU guests yields the cores to them (see below)
# A lane still running when this script ends (a failure, CI's time limit) goes with it.
trap 'for pid in "${lane_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done; rm -rf "$logs"' EXIT
suite() {
    local name=$1
    shift
    echo
    echo "=== $name: $*"
    local start=$SECONDS result
    if "${niceness[@]}" "$@"; then result=ok; else result=FAILED; fi
    echo "=== $name: $result ($((SECONDS - start)) s)"
    printf '%s %s %s\n' "$result" $((SECONDS - start)) "$name" >> "$results"
}
# lane NAME FUNCTION: runs FUNCTION's suites in the background, beside the ones
# that follow (suites that share no resource: the QEMU guests, the cached roots),
# its output kept in a log that join_lanes prints whole when it is done.
lane() {
    set -m  # its own process group, so that the trap above ends all of it
    "$2" > "$logs/lane-$1.log" 2>&1 &
    set +m
    lane_pids+=($!)
    lane_names+=("$1")
    echo
    echo "=== lane $1: started beside the suites below (its output follows when it is done)"
}
join_lanes() {
    local i
    for i in "${!lane_pids[@]}"; do
        wait "${lane_pids[$i]}" || true
        echo
        echo "=== lane ${lane_names[$i]}: its output"
        cat "$logs/lane-${lane_names[$i]}.log"
    done
    lane_pids=()
}
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
summary() {
    join_lanes
    local result seconds name passed=0 failed=0 failures=()
    echo
    echo "test: each suite, in the order finished (several run side by side: see lane)"
    while read -r result seconds name; do
        printf '%-6s %6s  %s\n' "$result" "$(minutes "$seconds")" "$name"
        if [ "$result" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
    done < "$results"
    echo "test: $(minutes $((SECONDS - began))) in all"
    ((failed)) && echo "test: failed suites: $(printf '%s; ' "${failures[@]}" | sed 's/; $//')"
    echo "test: $passed passed, $failed failed"
    ((failed == 0))
}

if ((fast)); then
    [ -x .venv/bin/python ] || { echo "test: no .venv: run scripts/setup.sh once (or scripts/test.sh)"; exit 1; }
    suite "build (debug, with tests)" swift build --build-tests
    suite "unit tests (Swift Testing)" swift test --skip-build
    suite "build (Embedded Swift, the shipped binary)" scripts/build-embedded.sh
    export ITCB_DONGLE_BIN=$PWD/.build-embedded/itcb-dongle
    suite "interop with Bumble (peripheral)" .venv/bin/python -m pytest -q Tests/Interop
    suite "interop with Bumble (central)" .venv/bin/python -m pytest -q Tests/Central
    summary
    exit
fi

# A fresh machine's Debian packages and the Python venv (nothing to do the next time).
suite "set-up (scripts/setup.sh: Debian packages, Python venv)" scripts/setup.sh
grep -q '^ok ' "$results" || { echo "test: set-up failed"; summary; exit 1; }

# Made once and kept (~/.cache/itcb-dongle, .cache/): what later suites need and a
# fresh machine lacks, made beside the builds (each waits on its own lock, so a
# suite that needs one before it is done waits for it).
caches() {
    niceness=(nice -n 10)
    suite "RootCanal environment (debootstrap trixie, cached)" scripts/rootcanal-setup.sh
    suite "USB guest: kernel and initramfs (cached)" Tests/USBFixture/setup.sh
    suite "firmware files from Debian's packages (cached)" scripts/firmware-files.sh
    suite "Debian 13's btusb.ko for the kernel-table check (cached)" scripts/kernel-btusb.sh
    if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null; then
        suite "Debian 12 and 13 roots for the package, Pi set-up and demo checks (debootstrap, cached)" \
            bash -c 'Tests/Deployment/package-on-debian.sh --prepare trixie &&
                     Tests/Deployment/package-on-debian.sh --prepare bookworm &&
                     Tests/Deployment/pi-setup-roots.sh --prepare trixie &&
                     Tests/Deployment/pi-setup-roots.sh --prepare bookworm &&
                     { [ ! -x /opt/swift/usr/bin/swift ] || Tests/Deployment/demo-setup-clean-debian.sh --prepare; }'
    fi
}
lane caches caches

suite "build (debug, with tests)" swift build --build-tests
suite "unit tests (Swift Testing)" swift test --skip-build
# Everything that talks to a peer runs the binary that ships: the same sources built as
# Embedded Swift; the debug build above ran the unit tests: both builds are proven.
suite "build (Embedded Swift, the shipped binary)" scripts/build-embedded.sh
export ITCB_DONGLE_BIN=$PWD/.build-embedded/itcb-dongle
export ITCB_DONGLE_RELEASE_BIN=$ITCB_DONGLE_BIN

# The QEMU guests (USB fixture, BlueZ): the longest suites, beside all the others.
guests() {
    # Ahead of whatever else keeps the cores busy (another build, `stress-ng --cpu 2`):
    # the guests and the Bumble peers they talk to run the product's real-time timeouts.
    # Raising a priority needs root or CAP_SYS_NICE; without it they keep the default.
    if [ "$(nice -n -10 nice 2>/dev/null)" = "-10" ]; then niceness=(nice -n -10); fi
    suite "USB transport in a QEMU guest" Tests/USBFixture/run-tests.sh
    # The path kiosks run, measured where it runs (the QEMU guest, libusb 1.0.26). Instructions
    # and syscalls are judged per wake-up and per packet: the wake-ups follow the peer's pacing
    # and the machine's load (docs/PERFORMANCE.md).
    suite "USB bench in the QEMU guest: 0 allocations of ours, <= 1 per transfer; <= 32,000 instructions per question besides 1,500 per wake-up; <= 2 syscalls per wake-up, 2 per transfer" \
        scripts/bench-usb.sh
    suite "interop with BlueZ in the QEMU guest" .venv/bin/python -m pytest -q Tests/BlueZ
}
lane guests guests
# The guests run the product's own timeouts (HCI commands, USB transfers) in a
# TCG-emulated machine: starved of the cores, the guest's clock still runs. The
# suites beside them (their counts do not depend on the CPU they get) yield,
# and the guests lane runs ahead of other work on the machine where it may.
niceness=(nice -n 10)

suite "embedded core (-no-allocations)" scripts/embedded-check.sh
suite "core stack frames <= 2 KB (armv7em)" scripts/stack-check.sh
# The same core as Cortex-M4 firmware (Embedded Swift): built with its budgets, run in QEMU against Bumble.
suite "firmware in QEMU mps2-an386 with Bumble" .venv/bin/python -m pytest -q Tests/Firmware
suite "fuzzing the core, the driver under a filling transmit queue, the vendor file and USB descriptor parsers (libFuzzer + ASan, 7 x 30 s)" scripts/fuzz.sh 30
suite "core bench: <= 8,000 instructions and 0 allocations per question (valgrind)" scripts/bench.sh
suite "process bench: 0 allocations per question; <= 1,500 instructions per wake-up, 8,000 per question besides; <= 2 syscalls per wake-up, 4 besides" scripts/bench-process.sh
suite "shipped binary: <= 256 KB stripped, <= 2,150 kB resident (stack <= 64 kB), <= 10 ms on CPU to advertising" scripts/binary-figures.sh
suite "interop with Bumble (peripheral)" .venv/bin/python -m pytest -q Tests/Interop
suite "interop with Bumble (central)" .venv/bin/python -m pytest -q Tests/Central
suite "appliance lifecycle with Bumble" .venv/bin/python -m pytest -q Tests/Lifecycle
# The same binary and .deb for Debian arm64 (Raspberry Pi kiosks), cross-built here and run in
# user-mode QEMU: the peripheral interop suite and the central's questions, against Bumble.
suite "arm64: the .deb cross-built, Bumble interop (peripheral, central) in qemu-aarch64" scripts/test-arm64.sh
# Realtek firmware download: the real Debian files (scripts/firmware-files.sh) on an emulated ROM, differential with Bumble's rtk driver.
suite "Realtek firmware loading (emulated ROM, Bumble rtk driver)" .venv/bin/python -m pytest -q Tests/Realtek
# Intel firmware download: the real ibt-* files on emulated Intel bootloaders (TLV and legacy), differential with Bumble's intel driver.
suite "Intel firmware loading" .venv/bin/python -m pytest -q Tests/Intel
# Broadcom/Cypress patchram: the real bluez-firmware .hcd files on an emulated ROM, over TCP and a pseudo-terminal UART.
suite "Broadcom patchram (TCP and UART)" .venv/bin/python -m pytest -q Tests/Broadcom
# MediaTek MT7921/MT7922/MT7925 RAM code: the real firmware-mediatek files (Debian 13) on an emulated chip, over TCP.
suite "MediaTek RAM code (TCP)" .venv/bin/python -m pytest -q Tests/MediaTek
suite "command line, docs and demo" .venv/bin/python -m pytest -q Tests/CLI
# RootCanal needs a newer glibc: the debootstrapped trixie tree the caches lane made.
suite "interop on RootCanal controllers" .venv/bin/python -m pytest -q Tests/RootCanal
suite "deployment (deb, unit, rule)" Tests/Deployment/test_deployment.sh

summary
