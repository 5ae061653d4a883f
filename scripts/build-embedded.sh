#!/usr/bin/env bash
# Builds the shipped itcb-dongle as Embedded Swift: `make shipped` (the Makefile
# holds the flags). The same sources as the SwiftPM build (BLEHost, EightBall,
# Chipsets, ITCBOptions, ITCBDongle over the CLinux and CLibUSB C modules),
# compiled module by module with swiftc
# (-enable-experimental-feature Embedded -wmo -Osize, functions in their own
# sections) and linked by clang against libc and libusb-1.0 only (nothing of
# libm is needed, which keeps it out of memory), with
# --gc-sections; the Swift runtime it needs is the few functions of the
# Embedded stdlib that the code uses, without its Unicode tables
# (libswiftUnicodeDataTables.a is not linked: text is compared as bytes,
# docs/ARCHITECTURE.md "Text is bytes").
#
# Then, at build time, from the program's one option table, by the build-time
# tool itcb-dongle-docs (not part of the binary): the man page, and the bash, zsh
# and fish completion (what `make install`, scripts/build-deb.sh and
# scripts/install.sh ship).
#
# Usage: scripts/build-embedded.sh [--arch x86_64|arm64] [--out DIR] [--force]
#   → DIR/itcb-dongle (default DIR: .build-embedded, .build-embedded-arm64 for
#     --arch arm64), DIR/itcb-dongle.1,
#     DIR/completion/{itcb-dongle.bash,_itcb-dongle,itcb-dongle.fish};
#     the last line on stdout is the binary's path. Nothing is rebuilt when no
#     source changed since the last build (--force rebuilds).
# Needs: the Swift 6.3 toolchain (its embedded stdlib for
# x86_64-unknown-linux-gnu), clang (the toolchain's), libusb-1.0-0-dev, awk (every
# Debian has one: scripts/literal-align.awk edits each module's IR).
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
# result's --version in qemu-aarch64-static (user mode); scripts/test-arm64.sh
# tests it there against Bumble. Needs,
# besides the above (scripts/setup.sh installs them): libc6-dev:arm64,
# libusb-1.0-0-dev:arm64, gcc-aarch64-linux-gnu, qemu-user-static.
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
force=()
arch=x86_64
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch=$2; shift ;;
        --out) out=$2; shift ;;
        --force) force=(-B) ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-embedded: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
case "$arch" in
    x86_64|amd64) arch=x86_64; strip=strip; out=${out:-.build-embedded} ;;
    arm64|aarch64) arch=arm64; strip=aarch64-linux-gnu-strip; out=${out:-.build-embedded-arm64} ;;
    *) echo "build-embedded: unknown --arch $arch (x86_64 or arm64)" >&2; exit 2 ;;
esac
binary="$out/itcb-dongle"
start=$(date +%s)
# make's own lines (the compiler commands) on stderr; stdout's last line is the binary.
make --no-print-directory "${force[@]}" shipped ARCH="$arch" OUT="$out" >&2 \
    || { echo "build-embedded: make shipped ARCH=$arch failed" >&2; exit 1; }
"$strip" -o "$out/obj/itcb-dongle.stripped" "$binary"
stripped=$(stat -c %s "$out/obj/itcb-dongle.stripped")
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "build-embedded: $binary in $(( $(date +%s) - start )) s: $(stat -c %s "$binary") bytes, $stripped stripped; needs: $needed" >&2
echo "$binary"
