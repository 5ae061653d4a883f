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
# Usage: scripts/build-embedded.sh [--arch x86_64|arm64] [--out DIR] [--force]
#   → DIR/itcb-dongle (default DIR: .build-embedded, .build-embedded-arm64 for
#     --arch arm64), DIR/itcb-dongle.1,
#     DIR/completion/{itcb-dongle.bash,_itcb-dongle,itcb-dongle.fish};
#     the last line on stdout is the binary's path. Nothing is rebuilt when no
#     source changed since the last build (--force rebuilds).
# Needs: the Swift 6.3 toolchain (its embedded stdlib for
# x86_64-unknown-linux-gnu), clang (the toolchain's), libusb-1.0-0-dev.
#
# --arch arm64 (Raspberry Pi kiosks, Debian arm64; default: x86_64) cross-builds
# the same binary on this machine. The toolchain has no Embedded stdlib for
# aarch64-unknown-linux-gnu, only for aarch64-none-none-elf; that one serves:
# Swift compiles for aarch64-none-none-elf while its C importer reads
# Debian's arm64 headers as aarch64-unknown-linux-gnu (the same AAPCS64 data
# layout: 64-bit long, unsigned char, 32-bit wchar_t), and clang links the
# objects against Debian's arm64 glibc and libusb (multiarch, with the cross
# binutils and crt files of gcc-aarch64-linux-gnu) into an ordinary
# dynamically linked PIE for /lib/ld-linux-aarch64.so.1. The build runs the
# result in qemu-aarch64-static (user mode) to make the man page and the
# completion; scripts/test-arm64.sh tests it there against Bumble. Needs,
# besides the above (scripts/setup.sh installs them): libc6-dev:arm64,
# libusb-1.0-0-dev:arm64, gcc-aarch64-linux-gnu, qemu-user-static.
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
force=0
arch=x86_64
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch=$2; shift ;;
        --out) out=$2; shift ;;
        --force) force=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-embedded: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
case "$arch" in
    x86_64|amd64)
        target=x86_64-unknown-linux-gnu; stdlib_target=$target; cross=(); run=(); strip=strip; link=()
        out=${out:-.build-embedded} ;;
    arm64|aarch64)
        target=aarch64-unknown-linux-gnu; stdlib_target=aarch64-none-none-elf
        cross=(-Xcc "--target=$target"); run=(qemu-aarch64-static); strip=aarch64-linux-gnu-strip
        # Segments aligned for 16 KB pages (the Pi 5's kernel; Debian's and the
        # Pi 3/4's use 4 KB), not the linker's 64 KB default, whose padding put
        # up to 64 KB of zeros in the file as the code grew past a boundary.
        link=(-Wl,-z,max-page-size=16384)
        out=${out:-.build-embedded-arm64} ;;
    *) echo "build-embedded: unknown --arch $arch (x86_64 or arm64)" >&2; exit 2 ;;
esac
swiftc=$(command -v swiftc)
toolchain=$(dirname "$(dirname "$(readlink -f "$swiftc")")")
embedded_lib="$toolchain/lib/swift/embedded/$stdlib_target"
[ -d "$embedded_lib" ] || { echo "build-embedded: no Embedded Swift stdlib for $stdlib_target in $toolchain" >&2; exit 1; }
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
       -target "$stdlib_target" "${cross[@]}" -wmo -parse-as-library -Osize
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
    -Wl,--gc-sections -Wl,-z,relro -Wl,-z,now -Wl,--build-id "${link[@]}"
touch -d "@$start" "$binary"  # out of date for any source edited while it was built
"${run[@]}" "$binary" --version > /dev/null

# What the option table makes, at build time.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)} \
    "${run[@]}" "$binary" --generate-man-page > "$out/itcb-dongle.1"
"${run[@]}" "$binary" --generate-completion-script bash > "$out/completion/itcb-dongle.bash"
"${run[@]}" "$binary" --generate-completion-script zsh > "$out/completion/_itcb-dongle"
"${run[@]}" "$binary" --generate-completion-script fish > "$out/completion/itcb-dongle.fish"

"$strip" -o "$out/obj/itcb-dongle.stripped" "$binary"
stripped=$(stat -c %s "$out/obj/itcb-dongle.stripped")
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "build-embedded: $binary in $(( $(date +%s) - start )) s: $(stat -c %s "$binary") bytes, $stripped stripped; needs: $needed" >&2
echo "$binary"
