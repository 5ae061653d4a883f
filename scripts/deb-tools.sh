#!/usr/bin/env bash
# What a package build (scripts/build-deb.sh) needs, in one place:
#   scripts/deb-tools.sh --packages ARCH   the Debian packages, one a line
#                                          (what scripts/setup.sh --package ARCH installs)
#   scripts/deb-tools.sh --check ARCH      nothing when all is there; otherwise one
#                                          line naming what is missing, exit 1
# ARCH: amd64 or arm64 (the arm64 package is cross-built on this machine).
set -euo pipefail
mode=${1:-} arch=${2:-}
# Each need: the Debian package, then the command or file that shows it is there.
needs=(
    "make|make" "pkg-config|pkg-config" "libusb-1.0-0-dev|/usr/include/libusb-1.0/libusb.h"
    "binutils|readelf" "binutils|strip" "dpkg-dev|dpkg-shlibdeps" "gzip|gzip"
)
case "$arch" in
    amd64) ;;
    arm64)
        # Debian's arm64 glibc and libusb headers and libraries (multiarch), the
        # cross binutils and crt files, and user-mode QEMU to ask the binary its version.
        needs+=("libc6-dev:arm64|/usr/include/aarch64-linux-gnu/bits/wordsize.h"
                "libusb-1.0-0-dev:arm64|/usr/lib/aarch64-linux-gnu/libusb-1.0.so"
                "gcc-aarch64-linux-gnu|aarch64-linux-gnu-gcc" "binutils-aarch64-linux-gnu|aarch64-linux-gnu-strip"
                "qemu-user-static|qemu-aarch64-static") ;;
    *) echo "deb-tools: the architecture must be amd64 or arm64 (got '$arch')" >&2; exit 2 ;;
esac
case "$mode" in
    --packages)
        for need in "${needs[@]}"; do echo "${need%%|*}"; done | awk '!seen[$0]++' ;;
    --check)
        missing=()
        for need in "${needs[@]}"; do
            shows=${need#*|}
            if [[ "$shows" == /* ]]; then [ -e "$shows" ] && continue; else command -v "$shows" >/dev/null && continue; fi
            [[ " ${missing[*]} " == *" ${need%%|*} "* ]] || missing+=("${need%%|*}")
        done
        command -v swift >/dev/null || missing+=("Swift 6.3 (https://www.swift.org/install/linux/tarball/)")
        ((${#missing[@]} == 0)) && exit 0
        debian=$(printf '%s\n' "${missing[@]}" | grep -v '^Swift' | tr '\n' ' ' | sed 's/ $//')
        echo "build-deb: an $arch package build needs $(printf '%s, ' "${missing[@]}" | sed 's/, $//')${debian:+: sudo apt-get install $debian (or scripts/setup.sh --package $arch)}" >&2
        exit 1 ;;
    *) echo "usage: scripts/deb-tools.sh --packages|--check amd64|arm64" >&2; exit 2 ;;
esac
