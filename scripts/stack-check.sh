#!/usr/bin/env bash
# Stack guard of the core: a fixed stack must hold the deepest call (the MCU
# has 16 KB; docs/FIRMWARE.md). Compiles BLEHost, EightBall and Chipsets
# as `make no-allocations` does (`make stack-frames`: Embedded Swift, armv7em,
# -Osize, -no-allocations) and reads every function's stack frame from LLVM's
# prologue/epilogue inserter (the "N stack bytes in function" analysis remark
# that clang's -Wframe-larger-than is built on; swiftc 6.3 has no
# -warn-stack-size option, so the remarks are saved as an optimization record).
# Prints the largest frames and fails when any frame exceeds the limit,
# listing each such function with its size and demangled name.
# Usage: scripts/stack-check.sh [LIMIT_BYTES=2048]
# (env: STACK_LIMIT, STACK_TOP=5 frames printed, STACK_REPORT_ONLY=1 never fails)
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=${1:-${STACK_LIMIT:-2048}}
TOP=${STACK_TOP:-5}
out="${STACK_OUT:-.build/stack}"
rm -rf "$out"
mkdir -p "$out"
# The Makefile's MCU build with the remarks saved (STACK_FLAGS: MCU_FLAGS, the flags
# of `make no-allocations`, plus the optimization record).
make -s --no-print-directory stack-frames STACK_OUT="$out"

# One "BYTES MODULE MANGLED" line per function of module $1's optimization record.
records() {
    awk -v module="$1" '
        /^--- !Analysis/ { pass = ""; name = ""; fn = "" }
        /^Pass:/ { pass = $2 }
        /^Name:/ { name = $2 }
        /^Function:/ { fn = $2; gsub("\047", "", fn) }
        /NumStackBytes:/ { if (pass == "prologepilog" && name == "StackSize") { b = $3; gsub("\047", "", b); print b, module, fn } }
    ' "$out/$1.opt.yaml"
}
# Largest first.
for module in BLEHost EightBall Chipsets; do records "$module"; done | sort -k1,1nr -k3 > "$out/frames.txt"
[ -s "$out/frames.txt" ] || { echo "stack-check: no stack size records (does swiftc still emit prologepilog remarks?)"; exit 1; }

# Appends the demangled name to each line.
demangle() {
    local bytes module mangled
    while read -r bytes module mangled; do
        printf '%6d  %-13s  %s  (%s)\n' "$bytes" "$module" \
            "$(swift demangle --compact --simplified "$mangled" 2>/dev/null || echo "$mangled")" "$mangled"
    done
}
# Value initialisers (a Swift `init` and a stored property's initial value)
# build what they return in their own frame: the transmit queue's initial
# PDUs, the 8-Ball's per-central buffers (kilobytes at Linux's capacities).
# Firmware calls them too, once at start, from Host.build and
# EightBallPeripheral.build (Sources/BLEHost/Buffers/InPlace.swift), which
# write the whole value where it lives and are held to LIMIT below like every
# other function; at the firmware's capacities the firmware suite holds every
# frame of the linked ELF, start-up included, to 2 KB. So here value
# initialisers are listed, bounded by INIT_LIMIT, and not held to LIMIT.
INIT_LIMIT=${STACK_INIT_LIMIT:-49152}
: > "$out/initialisers.txt"
: > "$out/others.txt"
# All names demangled in one pass (one process per name took a minute).
cut -d' ' -f3 "$out/frames.txt" | swift demangle --compact --simplified > "$out/names.txt"
paste -d'\t' "$out/frames.txt" "$out/names.txt" | while IFS=$'\t' read -r line name; do
    case "$name" in
        *".init("*|*"variable initialization expression of "*) echo "$line" >> "$out/initialisers.txt" ;;
        *) echo "$line" >> "$out/others.txt" ;;
    esac
done
for required in 'static Host.build(' 'static EightBallPeripheral.build('; do
    found=$(paste -d'\t' "$out/frames.txt" "$out/names.txt" | awk -F'\t' -v want="$required" \
        '!done && index($2, want) == 1 { split($1, f, " "); print $2 ": " f[1] " bytes"; done = 1 }')
    [ -n "$found" ] || { echo "stack-check: FAIL: the in-place constructor $required is missing"; exit 1; }
    echo "stack-check: in-place constructor $found"
done
echo "stack-check: value initialisers (bounded by $INIT_LIMIT B; at the firmware's capacities its ELF holds them to 2 KB), largest:"
head -n 3 "$out/initialisers.txt" | demangle
init_over=$(awk -v limit="$INIT_LIMIT" '$1 > limit' "$out/initialisers.txt")
if [ -n "$init_over" ]; then
    echo "stack-check: FAIL: value initialiser(s) over $INIT_LIMIT bytes:"
    printf '%s\n' "$init_over" | demangle
    [ "${STACK_REPORT_ONLY:-0}" = 1 ] || exit 1
fi
mv "$out/others.txt" "$out/frames.txt"
count=$(wc -l < "$out/frames.txt")
echo "stack-check: $count functions (armv7em, -Osize); the $TOP largest frames (bytes):"
head -n "$TOP" "$out/frames.txt" | demangle
over=$(awk -v limit="$LIMIT" '$1 > limit' "$out/frames.txt")
if [ -n "$over" ]; then
    echo "stack-check: FAIL: $(printf '%s\n' "$over" | wc -l) function(s) with a frame over $LIMIT bytes:"
    printf '%s\n' "$over" | demangle
    [ "${STACK_REPORT_ONLY:-0}" = 1 ] || exit 1
    echo "stack-check: report only (STACK_REPORT_ONLY=1): not failing"
else
    echo "stack-check: every frame is within $LIMIT bytes"
fi

# Read-only queries written outside the core, as a test adds them
# (Tests/StackProbe): a borrowed read of the host, the database, the 8-Ball or
# the generic driver must read in place, so each needs a few words of stack
# (before the containers were pinned, one such query of the host took 70 KB).
PROBE_LIMIT=${STACK_PROBE_LIMIT:-128}
# shellcheck disable=SC2046  # the Makefile's flags, split into words
swiftc $(make -s --no-print-directory print-MCU_FLAGS) -I "$out" -module-name StackProbe \
    Tests/StackProbe/ReadOnlyQueries.swift -c -o "$out/StackProbe.o" \
    -save-optimization-record=yaml -save-optimization-record-passes prologepilog \
    -save-optimization-record-path "$out/StackProbe.opt.yaml"
records StackProbe | sort -k1,1nr > "$out/probes.txt"
probes=$(grep -c '10StackProbe[0-9]*probe' "$out/probes.txt" || true)
[ "$probes" -gt 0 ] || { echo "stack-check: FAIL: no frame records for Tests/StackProbe"; exit 1; }
probe_over=$(awk -v limit="$PROBE_LIMIT" '$1 > limit' "$out/probes.txt")
if [ -n "$probe_over" ]; then
    echo "stack-check: FAIL: read-only queries outside the core over $PROBE_LIMIT bytes (a container is copied):"
    printf '%s\n' "$probe_over" | demangle
    [ "${STACK_REPORT_ONLY:-0}" = 1 ] || exit 1
fi
echo "stack-check: $probes read-only queries written outside the core (Tests/StackProbe), largest frame $(head -n 1 "$out/probes.txt" | cut -d' ' -f1) bytes (limit $PROBE_LIMIT)"
