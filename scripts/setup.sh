#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian machine: Debian
# packages (only those missing) and the Python venv with the pinned Bumble.
# Safe to run again: it does nothing when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libusb-1.0-0-dev pkg-config tshark valgrind)
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
command -v swift >/dev/null || { echo "setup: Swift 6.x is required (https://swift.org/install)"; exit 1; }
scripts/bootstrap-venv.sh
