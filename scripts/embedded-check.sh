#!/usr/bin/env bash
# Proves the sans-IO core never allocates: compiles BLEHost, EightBall and the
# vendor drivers (Chipsets: not in the firmware, but held to the same rule
# so they stay portable) as Embedded Swift for a Cortex-M4 with -no-allocations
# (docs/ARCHITECTURE.md: the core never does I/O, reads a clock or allocates). Any
# use of Array, String interpolation, existentials, classes or escaping closures
# in the core fails this build. The build is `make no-allocations` (its flags:
# MCU_FLAGS in the Makefile, shared with scripts/stack-check.sh and the firmware).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${EMBEDDED_OUT:-.build/embedded}"
# The flags are the Makefile's (MCU_FLAGS); a fresh build every time, as a proof should be.
make -s --no-print-directory -B no-allocations EMBEDDED_OUT="$out"

echo "embedded-check: BLEHost, EightBall and Chipsets build as Embedded Swift (armv7em, -no-allocations)"
if command -v size >/dev/null; then size "$out/BLEHost.o" "$out/EightBall.o" "$out/Chipsets.o"; fi
