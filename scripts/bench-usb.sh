#!/usr/bin/env bash
# USB process benchmark of the peripheral: counts per question, not
# times, on the path kiosks run: `itcb-dongle --role peripheral --transport usb`
# in the USB fixture's QEMU guest (Tests/USBFixture: Debian 6.1 kernel, usbfs,
# dummy_hcd, the GadgetFS-emulated CSR dongle, whose controller is a Bumble
# virtual controller on the host; the host's libusb 1.0.26 over the guest's 9p
# /usr). Same cycle and difference method as scripts/bench-process.sh: a Bumble
# central on the host (Tests/PythonSupport/bench_central.py, on a second controller
# of the same link) asks N questions over ONE connection, each a full ITCB
# cycle (CCCD 0x0001 Write Request, question Write Request, answer
# notification, CCCD 0x0000); every figure is measured with N1 and N2
# questions and reported as (run N2 - run N1) / (N2 - N1), so start-up,
# connection set-up and shutdown cancel out.
#
#   instructions  valgrind --tool=callgrind in the guest: user-space
#                 instructions of the whole process, judged along the poll
#                 loop's structure (Tests/PythonSupport/bench_figures.py): per
#                 wake-up and per question besides the wake-ups (the work for
#                 its packets), judged together: the total against the budget
#                 besides plus the budget per wake-up times its wake-ups. Every
#                 transfer is already its own wake-up and none can be cut, so
#                 no second pair of runs could tell the two apart (TCP's does)
#   allocations   the same callgrind runs: calls of malloc, calloc, realloc,
#                 posix_memalign, aligned_alloc (callgrind counts calls exactly;
#                 under it the allocator is glibc's own), each charged to its
#                 caller's object: libusb (e.g. the URB calloc of its Linux
#                 backend in every libusb_submit_transfer) or ours (our Swift
#                 code and the Swift runtime linked into the binary; a caller in
#                 libc/libstdc++ passes the charge on to its own callers)
#                 (Tests/PythonSupport/callgrind_profile.py)
#   syscalls      strace -f -C in the guest, attached (-p, every thread) once
#                 the peripheral advertises, written to the guest's tmpfs:
#                 calls by name; clock_gettime is reported apart (the guest's
#                 hpet clocksource has no vDSO fast path: each clock read is a
#                 real syscall, unlike on a kiosk with a TSC) and left out of
#                 the total. Judged along the poll loop's structure: per
#                 wake-up (poll and the reap loop's final EAGAIN, the ioctls
#                 that failed) and besides the wake-ups (a submit and a reap
#                 per transfer, the log line). The number of wake-ups depends
#                 on timing (the slower the process, the more packets one
#                 wake-up finds), so the total is reported, not gated
#   transfers     submitted USB transfers: USBDEVFS_SUBMITURB ioctls in the
#                 same strace runs (libusb_submit_transfer calls under
#                 callgrind are shown beside them)
#   cross-check   the strace runs also load Tests/USBFixture/alloc_count.c
#                 (LD_PRELOAD, built here with cc): allocations by caller at
#                 full speed, counted from the moment strace attaches
# Also, unless BENCH_USB_BUMBLE=none: the Bumble 8-Ball peripheral
# (Tests/PythonSupport/bumble_8ball.py) driving the same emulated dongle through
# Bumble's own `usb` transport in the guest (the venv's packages copied into
# the guest's work folder for its python3, 3.11 like the venv; libusb_package
# left out, so it uses the same system libusb): syscalls and transfers by the
# same method, allocations from the LD_PRELOAD counter (malloc calls; Python's
# pymalloc serves small objects itself). Its instructions are not measured by
# default (Python under callgrind under TCG needs over 8 minutes just to
# start): BENCH_USB_BUMBLE=strace,callgrind would measure them (allowed up to
# 2 hours; never run to the end so far: the one try, at load 7, had not
# reached READY after 8 minutes). The line before the last says what was
# measured for Bumble, or why not.
#
# Fails (exit 1, one line per budget, printed just before the last line)
# when, per question: allocations of ours > 0, allocations in all > submitted
# USB transfers, instructions > 32,000 besides 1,500 for each wake-up,
# syscalls per wake-up > 2, syscalls besides
# the wake-ups > 2 per submitted transfer + 1 — unless BENCH_REPORT_ONLY=1 or --report-only. (Allocations are compared with
# 0.05 per question of slack, BENCH_USB_ALLOC_SLACK: 2 stray allocations over
# the 60 extra questions are a difference between two runs, not the cycle,
# which allocates per packet or not at all.)
# The LAST line is then always
#   usb per question: N instructions, A allocations (O ours), S syscalls
# Exit 2 (and no such line) when a measurement of ours could not be made.
#
# Time (2 cores, measured 2026-11-24): 3-4 minutes with the cores fairly
# quiet (load 1-3: guest boot 10 s, ours under callgrind 20/80 questions
# 60-90 s, ours under strace 20/80 30-40 s, Bumble under strace 10/50 55-90 s);
# about 6 minutes while other builds and QEMU guests share the cores (load 6). valgrind starts in
# ~25-55 s in the guest, Python with Bumble in ~20-60 s. BENCH_USB_BUMBLE=none saves the Bumble part. Needs the
# shipped binary ($ITCB_DONGLE_BIN, else .build-embedded/itcb-dongle),
# the Bumble venv (.venv, scripts/setup.sh) and the fixture
# (Tests/USBFixture/setup.sh, run here: apt packages and a kernel download the
# first time); valgrind and strace on the host (the guest runs the host's
# /usr).
#
# Usage: scripts/bench-usb.sh [--report-only] [--analyze]
#   --analyze: no runs, the report and budgets from the runs already in the
#   output folder (same BENCH_USB_* question counts)
# Output in .build/bench-usb/ (BENCH_OUT): each run's logs and tool outputs,
# results.json (every figure, for the README table).
set -uo pipefail
cd "$(dirname "$0")/.."

MAX_INSTRUCTIONS_PER_WAKEUP=${BENCH_USB_MAX_INSTRUCTIONS_PER_WAKEUP:-1500}
MAX_INSTRUCTIONS_BESIDES=${BENCH_USB_MAX_INSTRUCTIONS_BESIDES:-32000}
MAX_ALLOCATIONS_OURS=${BENCH_USB_MAX_ALLOCATIONS:-0}
MAX_SYSCALLS_PER_WAKEUP=${BENCH_USB_MAX_SYSCALLS_PER_WAKEUP:-2}
MAX_SYSCALLS_PER_TRANSFER=${BENCH_USB_MAX_SYSCALLS_PER_TRANSFER:-2}
ALLOC_SLACK=${BENCH_USB_ALLOC_SLACK:-0.05}
# Question counts (N1,N2) of the callgrind runs and of the strace runs.
VALGRIND_NS=${BENCH_USB_VALGRIND_N:-20,80}
STRACE_NS=${BENCH_USB_STRACE_N:-20,80}
BUMBLE_STRACE_NS=${BENCH_USB_BUMBLE_STRACE_N:-10,50}
# Bumble's runs: none, strace, or strace,callgrind.
BUMBLE=${BENCH_USB_BUMBLE:-strace}
REPORT_ONLY=${BENCH_REPORT_ONLY:-0}
ANALYZE=0
for arg in "$@"; do
    case $arg in
        --report-only) REPORT_ONLY=1 ;;
        --analyze) ANALYZE=1 ;;
        *) echo "bench-usb: unknown argument $arg (usage: scripts/bench-usb.sh [--report-only] [--analyze])" >&2; exit 2 ;;
    esac
done
# Extra peripheral flags (e.g. "--log-level warning"); default: the shipped defaults.
EXTRA_FLAGS=${BENCH_PERIPHERAL_FLAGS:-}

BIN=${ITCB_DONGLE_BIN:-$PWD/.build-embedded/itcb-dongle}
PY=$PWD/.venv/bin/python
OUT=${BENCH_OUT:-$PWD/.build/bench-usb}

die() { echo "bench-usb: $*" >&2; exit 2; }
[ -x "$BIN" ] || die "no shipped binary at $BIN (scripts/build-embedded.sh)"
[ -x "$PY" ] || die "no Bumble venv at .venv (scripts/setup.sh)"
for tool in valgrind strace; do
    command -v "$tool" >/dev/null || die "$tool is not installed on the host, whose /usr the guest runs (apt-get install valgrind strace)"
done
Tests/USBFixture/setup.sh > /dev/null || die "Tests/USBFixture/setup.sh failed"

# The driver runs in its own session; it stops its guest and Bumble link on
# the way out (and QEMU stops by itself when the driver is gone). On
# interruption or failure here its whole process group is killed too.
driver=""
cleanup() {
    [ -n "$driver" ] || return
    kill -TERM -- "-$driver" 2>/dev/null
    for _ in $(seq 50); do kill -0 -- "-$driver" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$driver" 2>/dev/null
    driver=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench-usb: $BIN"
flags=()
[ "$REPORT_ONLY" = 1 ] && flags+=(--report-only)
[ "$ANALYZE" = 1 ] && flags+=(--analyze)
start=$SECONDS
mkdir -p "$(dirname "$OUT")"
: > "$OUT.log"
ITCB_DONGLE_RELEASE_BIN=$BIN setsid "$PY" -u Tests/USBFixture/bench_usb.py --out "$OUT" \
    --valgrind "$VALGRIND_NS" --strace "$STRACE_NS" --bumble-strace "$BUMBLE_STRACE_NS" --bumble "$BUMBLE" --peripheral-flags "$EXTRA_FLAGS" \
    --max-instructions-per-wakeup "$MAX_INSTRUCTIONS_PER_WAKEUP" --max-instructions-besides "$MAX_INSTRUCTIONS_BESIDES" \
    --max-allocations-ours "$MAX_ALLOCATIONS_OURS" \
    --max-syscalls-per-wakeup "$MAX_SYSCALLS_PER_WAKEUP" --max-syscalls-per-transfer "$MAX_SYSCALLS_PER_TRANSFER" --slack "$ALLOC_SLACK" "${flags[@]}" < /dev/null > "$OUT.log" 2>&1 &
driver=$!
# Its output, as it comes (the log stays in $OUT.log); the hard limit is 20 minutes (2 hours with Bumble under callgrind).
tail -n +1 -f "$OUT.log" --pid "$driver" &
follower=$!
status=0
limit=1200
case $BUMBLE in *callgrind*) limit=7200 ;; esac
end=$((SECONDS + limit))
while kill -0 "$driver" 2>/dev/null && ((SECONDS < end)); do sleep 1; done
if kill -0 "$driver" 2>/dev/null; then
    cleanup
    wait "$follower" 2>/dev/null
    die "timed out after $((SECONDS - start)) s"
fi
wait "$driver" || status=$?
driver=""
wait "$follower" 2>/dev/null
if ! tail -1 "$OUT.log" | grep -q '^usb per question: '; then
    echo "bench-usb: the measurement failed (status $status) after $((SECONDS - start)) s; logs in $OUT and $OUT.log" >&2
    exit 2
fi
exit "$status"
