#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian machine: Debian
# packages (only those missing) and the Python venv with the pinned Bumble.
# RootCanal's environment is made by its own suite (scripts/rootcanal-setup.sh).
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

# strace: the process benchmark (scripts/bench-process.sh).
# debootstrap: the trixie tree RootCanal runs with (scripts/rootcanal-setup.sh).
# bluez, dbus, python3-dbus, python3-gi: BlueZ in the USB fixture's guest, which
# mounts this machine's /usr (Tests/BlueZ).
packages=(libusb-1.0-0-dev pkg-config tshark valgrind strace debootstrap bluez dbus python3-dbus python3-gi)
# The firmware target (scripts/firmware.sh): the ARM toolchain, picolibc and QEMU.
packages+=(gcc-arm-none-eabi binutils-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: Swift 6.2 or newer is required (https://swift.org/install)"; exit 1; }
# Package.swift's swift-tools-version (the core uses InlineArray and value generics).
swift_version=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -n 1)
if [ -n "$swift_version" ]; then
    read -r major minor <<< "$swift_version"
    if ((major < 6 || (major == 6 && minor < 2))); then
        echo "setup: Swift 6.2 or newer is required, this is $major.$minor (https://swift.org/install)"
        exit 1
    fi
fi
scripts/bootstrap-venv.sh
