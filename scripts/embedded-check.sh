#!/usr/bin/env bash
# Proves the sans-IO core never allocates: compiles BLEHost, EightBall and the
# vendor drivers (VendorDrivers: not in the firmware, but held to the same rule
# so they stay portable) as Embedded Swift for a Cortex-M4 with -no-allocations
# (docs/ARCHITECTURE.md: the core never does I/O, reads a clock or allocates). Any
# use of Array, String interpolation, existentials, classes or escaping closures
# in the core fails this build.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${EMBEDDED_OUT:-.build/embedded}"
mkdir -p "$out"
flags=(-enable-experimental-feature Embedded -enable-experimental-feature AddressableParameters -wmo -parse-as-library
       -target armv7em-none-none-eabi -Osize -no-allocations)

swiftc "${flags[@]}" -module-name BLEHost -emit-module -emit-module-path "$out/BLEHost.swiftmodule" \
    -c Sources/BLEHost/*.swift -o "$out/BLEHost.o"
swiftc "${flags[@]}" -module-name EightBall -I "$out" \
    -c Sources/EightBall/*.swift -o "$out/EightBall.o"
swiftc "${flags[@]}" -module-name VendorDrivers -I "$out" \
    -c Sources/VendorDrivers/*.swift -o "$out/VendorDrivers.o"

echo "embedded-check: BLEHost, EightBall and VendorDrivers build as Embedded Swift (armv7em, -no-allocations)"
if command -v size >/dev/null; then size "$out/BLEHost.o" "$out/EightBall.o" "$out/VendorDrivers.o"; fi
