#!/usr/bin/env bash
# Installs what is missing on a fresh Debian machine, then the Python venv with
# the pinned Bumble (Tests/requirements.txt). Safe to run again: it does
# nothing when everything is there.
#
#   scripts/setup.sh          everything scripts/test.sh needs (Debian packages
#                             for the firmware, benchmarks, BlueZ and RootCanal suites)
#   scripts/setup.sh --demo   only what scripts/demo.sh needs: libusb's dev
#                             package, pkg-config, make, and python3-venv when
#                             `python3 -m venv` cannot work (stock Debian 12)
#   scripts/setup.sh --package [amd64|arm64]
#                             only what scripts/build-deb.sh needs for that
#                             architecture (default: this machine's); no venv
#
# RootCanal's environment is made by its own suite (scripts/rootcanal-setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
demo=0 package=""
case "${1:-}" in
    "") ;;
    --demo) demo=1 ;;
    --package)
        package=${2:-$(dpkg --print-architecture)}
        case "$package" in amd64|x86_64) package=amd64 ;; arm64|aarch64) package=arm64 ;;
            *) echo "setup: --package takes amd64 or arm64 (got '$package')" >&2; exit 2 ;; esac ;;
    *) echo "setup: unknown option $1 (use --demo, --package [amd64|arm64], or nothing)" >&2; exit 2 ;;
esac

# The build: libusb-1.0 through pkg-config (Sources/CLibUSB); make runs the Makefile.
packages=(libusb-1.0-0-dev pkg-config make)
if [ -n "$package" ]; then
    # scripts/build-deb.sh names the same list when a package is missing (scripts/deb-tools.sh).
    mapfile -t packages < <(scripts/deb-tools.sh --packages "$package")
elif ((!demo)); then
    # strace: the process benchmark (scripts/bench-process.sh).
    # debootstrap: the trixie tree RootCanal runs with (scripts/rootcanal-setup.sh)
    # and the clean Debian root of the demo check (Tests/Deployment).
    # bluez, dbus, python3-dbus, python3-gi: BlueZ in the USB fixture's guest, which
    # mounts this machine's /usr (Tests/BlueZ).
    packages+=(tshark valgrind strace debootstrap bluez dbus python3-dbus python3-gi)
    # prometheus-node-exporter, prometheus (promtool): the --metrics-file test scrapes
    # the real textfile collector and checks the file (Tests/Lifecycle/test_metrics.py).
    packages+=(prometheus-node-exporter prometheus)
    # The firmware target (scripts/firmware.sh): the ARM toolchain, picolibc and QEMU.
    packages+=(gcc-arm-none-eabi binutils-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm)
    # The arm64 build (scripts/build-embedded.sh --arch arm64): Debian's arm64 glibc and
    # libusb through multiarch, the cross binutils and crt files, and user-mode QEMU to run it.
    packages+=(libc6-dev:arm64 libusb-1.0-0-dev:arm64 gcc-aarch64-linux-gnu qemu-user-static)
fi
# The venv (Bumble): Debian keeps ensurepip, which `python3 -m venv` needs, in
# python3-venv; without it venv fails with "ensurepip is not available".
if [ -z "$package" ] && [ ! -x .venv/bin/python ] && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    packages+=(python3-venv)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    if [[ " ${missing[*]}" == *:arm64* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
        "${sudo_cmd[@]}" dpkg --add-architecture arm64
    fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: Swift 6.3 or newer is required (https://www.swift.org/install/linux/tarball/)"; exit 1; }
# 6.3: the shipped binary's Embedded Swift build (scripts/build-embedded.sh); the
# SwiftPM build alone would do with Package.swift's swift-tools-version (6.2).
swift_version=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -n 1)
if [ -n "$swift_version" ]; then
    read -r major minor <<< "$swift_version"
    if ((major < 6 || (major == 6 && minor < 3))); then
        echo "setup: Swift 6.3 or newer is required, this is $major.$minor (https://www.swift.org/install/linux/tarball/)"
        exit 1
    fi
fi
[ -n "$package" ] || scripts/bootstrap-venv.sh
