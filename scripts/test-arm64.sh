#!/usr/bin/env bash
# The arm64 build (Debian arm64 kiosks, Raspberry Pi 3/4/5)
# tested on this x86_64 machine: builds out/itcb-dongle_<version>_arm64.deb
# (scripts/build-deb.sh --arch arm64, which cross-builds the Embedded Swift
# binary with scripts/build-embedded.sh --arch arm64), checks what it holds
# (Architecture: arm64; an aarch64 PIE for /lib/ld-linux-aarch64.so.1 of at most
# 256 KB; lintian clean, Debian 12's and 13's), then runs the packaged binary in user-mode QEMU
# (qemu-aarch64-static, with Debian's arm64 glibc and libusb from multiarch)
# against Bumble over H4 on loopback TCP: the peripheral interop suite (Tests/Interop) and the central's
# twenty questions to a Bumble 8-Ball and a hundred to our own arm64 peripheral; and
# the Raspberry Pi's UART set-up (an emulated Broadcom chip on a pseudo-terminal:
# patchram, 460800 baud, twenty questions).
#
# Usage: scripts/test-arm64.sh [PYTEST ARGS]
#   with arguments, pytest runs those instead (the same binary), e.g.
#   scripts/test-arm64.sh -q Tests/Central -k prompt
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(scripts/build-deb.sh --arch arm64 | sed -n 's/^build-deb: built //p')
[ -f "$deb" ] || { echo "test-arm64: scripts/build-deb.sh --arch arm64 made no package" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/root"
binary=$work/root/usr/bin/itcb-dongle
fail() { echo "test-arm64: $deb: $*" >&2; exit 1; }
[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || fail "Architecture: $(dpkg-deb -f "$deb" Architecture)"
kind=$(file -b "$binary")
[[ "$kind" == "ELF 64-bit LSB pie executable, ARM aarch64,"*"interpreter /lib/ld-linux-aarch64.so.1"* ]] || fail "/usr/bin/itcb-dongle is $kind"
size=$(stat -c %s "$binary")
((size <= 256 * 1024)) || fail "/usr/bin/itcb-dongle is $size bytes stripped (256 KB allowed)"
# As the amd64 package (Tests/Deployment): no lintian error or warning.
findings=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v "root privileges is not recommended" || true)
! grep -q '^[EW]:' <<< "$findings" || fail "lintian: $findings"
# And Debian 13's lintian, in the root Tests/Deployment caches.
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null; then
    Tests/Deployment/package-on-debian.sh --lintian-only trixie "$deb" >&2 || fail "Debian 13's lintian: see above"
fi
echo "test-arm64: $deb: /usr/bin/itcb-dongle $size bytes stripped; $(dpkg-deb -f "$deb" Depends); lintian clean"
# What the suites run (they exec $ITCB_DONGLE_BIN): the packaged binary in QEMU.
printf '#!/bin/sh\nexec qemu-aarch64-static "%s" "$@"\n' "$binary" > "$work/itcb-dongle"
chmod +x "$work/itcb-dongle"
# The pressure tests (30 s of Bumble load) run once, on x86_64: the flow
# control they prove is the same core code on both.
(($#)) || set -- -q Tests/Interop --ignore=Tests/Interop/test_pressure.py \
    Tests/Central/test_central.py::test_twenty_questions_against_bumble_peripheral \
    Tests/Central/test_central.py::test_hundred_questions_our_central_against_our_peripheral \
    Tests/Broadcom/test_broadcom.py::test_broadcom_pi_uart_at_a_chosen_rate
ITCB_DONGLE_BIN=$work/itcb-dongle .venv/bin/python -m pytest "$@"
