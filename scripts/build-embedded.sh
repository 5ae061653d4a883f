#!/usr/bin/env bash
# Builds the shipped itcb-dongle as Embedded Swift (issue 17): the same sources
# as the SwiftPM build (BLEHost, EightBall, VendorDrivers, ITCBDongle over the CLinux and
# CLibUSB C modules), compiled module by module with swiftc
# (-enable-experimental-feature Embedded -wmo -Osize, functions in their own
# sections) and linked by clang against libc and libusb-1.0 only (nothing of
# libm is needed, which keeps it out of memory), with
# --gc-sections; the Swift runtime it needs is the few functions of the
# Embedded stdlib that the code uses, plus Swift's Unicode normalisation
# tables (libswiftUnicodeDataTables.a: String comparison and hashing).
#
# Then, at build time, from the binary's one option table: the man page, and
# the bash, zsh and fish completion (what scripts/build-deb.sh and
# scripts/install.sh ship).
#
# Usage: scripts/build-embedded.sh [--out DIR] [--force]
#   → DIR/itcb-dongle (default DIR: .build-embedded), DIR/itcb-dongle.1,
#     DIR/completion/{itcb-dongle.bash,_itcb-dongle,itcb-dongle.fish};
#     the last line on stdout is the binary's path. Nothing is rebuilt when no
#     source changed since the last build (--force rebuilds).
# Needs: the Swift 6.3 toolchain (its embedded stdlib for
# x86_64-unknown-linux-gnu), clang (the toolchain's), libusb-1.0-0-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build-embedded
force=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift ;;
        --force) force=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-embedded: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
target=x86_64-unknown-linux-gnu
swiftc=$(command -v swiftc)
toolchain=$(dirname "$(dirname "$(readlink -f "$swiftc")")")
embedded_lib="$toolchain/lib/swift/embedded/$target"
[ -d "$embedded_lib" ] || { echo "build-embedded: no Embedded Swift stdlib for $target in $toolchain" >&2; exit 1; }
clang="$toolchain/bin/clang"
[ -x "$clang" ] || clang=clang

sources=(Sources/BLEHost/*.swift Sources/EightBall/*.swift Sources/VendorDrivers/*.swift Sources/ITCBDongle/*.swift
         Sources/CLinux/* Sources/CLibUSB/* scripts/build-embedded.sh)
binary="$out/itcb-dongle"
if [ "$force" = 0 ] && [ -x "$binary" ] && [ -z "$(find "${sources[@]}" -newer "$binary" 2>/dev/null)" ]; then
    echo "build-embedded: $binary is up to date" >&2
    echo "$binary"
    exit 0
fi

mkdir -p "$out/obj" "$out/completion"
flags=(-enable-experimental-feature Embedded -enable-experimental-feature AddressableParameters
       -target "$target" -wmo -parse-as-library -Osize
       # One section per function, so the link keeps only what is called; the
       # machine outliner folds the repeated instruction runs of String code.
       -Xfrontend -function-sections -Xllvm -enable-machine-outliner=always
       # As the SwiftPM release build: no run-time exclusivity checks.
       -enforce-exclusivity=unchecked)
module() {
    local name=$1; shift
    rm -f "$out/obj/$name.o"  # swiftc may leave a stale object in place when it fails
    echo "build-embedded: swiftc $name (Embedded, -Osize)" >&2
    "$swiftc" "${flags[@]}" -module-name "$name" -I "$out/obj" "$@" \
        -emit-module -emit-module-path "$out/obj/$name.swiftmodule" -c -o "$out/obj/$name.o"
}
start=$(date +%s)
module BLEHost Sources/BLEHost/*.swift
module EightBall Sources/EightBall/*.swift
module VendorDrivers Sources/VendorDrivers/*.swift
# The platform layer inlines less than -Osize's default: its code is mostly
# strings (log lines, messages, --help), which Swift otherwise inlines at every
# use; 581 KB stripped with the defaults, about 460 KB so (2026-11-24). The process
# benchmark keeps its budgets (27,811 instructions per question, 40,000 allowed).
module ITCBDongle -I Sources/CLinux -I Sources/CLibUSB \
    -Xfrontend -sil-inline-threshold -Xfrontend 10 \
    -Xfrontend -sil-inline-caller-benefit-reduction-factor -Xfrontend 64 \
    Sources/ITCBDongle/*.swift
rm -f "$binary"
"$clang" -target "$target" -o "$binary" "$out/obj/ITCBDongle.o" "$out/obj/BLEHost.o" "$out/obj/EightBall.o" \
    "$out/obj/VendorDrivers.o" \
    -L "$embedded_lib" -lswiftUnicodeDataTables -lusb-1.0 \
    -Wl,--gc-sections -Wl,-z,relro -Wl,-z,now -Wl,--build-id
touch -d "@$start" "$binary"  # out of date for any source edited while it was built
"$binary" --version > /dev/null

# What the option table makes, at build time.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)} \
    "$binary" --generate-man-page > "$out/itcb-dongle.1"
"$binary" --generate-completion-script bash > "$out/completion/itcb-dongle.bash"
"$binary" --generate-completion-script zsh > "$out/completion/_itcb-dongle"
"$binary" --generate-completion-script fish > "$out/completion/itcb-dongle.fish"

strip -o "$out/obj/itcb-dongle.stripped" "$binary"
stripped=$(stat -c %s "$out/obj/itcb-dongle.stripped")
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "build-embedded: $binary in $(( $(date +%s) - start )) s: $(stat -c %s "$binary") bytes, $stripped stripped; needs: $needed" >&2
echo "$binary"
