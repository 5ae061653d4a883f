#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ over the core (BLEHost, EightBall) with
# AddressSanitizer and runs them. Usage: scripts/fuzz.sh [SECONDS] [TARGET]
# (default 30 s, all targets; TARGET is a number of Fuzz/FuzzTargets.swift's list,
# e.g. 5 for USB transfers, run alone with its own corpus).
# Fails on any crash, trap or sanitizer report; the reproducer lands in .build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
target=${2:-}
out=.build/fuzz
corpus="$out/corpus${target:+-$target}"
mkdir -p "$corpus"
# A build that fails must not leave the last one's binary to run.
rm -f "$out/fuzz-core"
flags=(-sanitize=fuzzer,address -parse-as-library -Onone -enable-experimental-feature AddressableParameters)
swiftc "${flags[@]}" -module-name BLEHost -emit-module -emit-module-path "$out/BLEHost.swiftmodule" \
    -c -wmo Sources/BLEHost/*.swift -o "$out/BLEHost.o" 2>&1 | grep -v "warning:" || true
swiftc "${flags[@]}" -module-name EightBall -I "$out" -emit-module -emit-module-path "$out/EightBall.swiftmodule" \
    -c -wmo Sources/EightBall/*.swift -o "$out/EightBall.o" 2>&1 | grep -v "warning:" || true
swiftc "${flags[@]}" -I "$out" Fuzz/FuzzTargets.swift "$out/BLEHost.o" "$out/EightBall.o" -o "$out/fuzz-core" 2>&1 \
    | grep -v -e "ld.gold: warning" -e "^$" || true
[ -x "$out/fuzz-core" ] || { echo "fuzz: build failed"; exit 1; }
# Crash reports come from ASan/libFuzzer; Swift's own backtracer would only slow them down.
SWIFT_BACKTRACE=enable=no FUZZ_TARGET="$target" "$out/fuzz-core" -max_total_time="$seconds" -max_len=600 -timeout=10 \
    -artifact_prefix="$out/" -print_final_stats=1 "$corpus" 2>&1 | tail -n 12
echo "fuzz: no crash in ${seconds} s${target:+ (target $target)}"
