#!/usr/bin/env bash
# Installs itcb-dongle on a system without dpkg: binary, udev rule, systemd unit,
# default options (kept if present), dongles file, and the "itcb" user.
# Usage: sudo scripts/install.sh [--binary PATH] [--uninstall]
# DESTDIR installs into a staging root (no users created, nothing reloaded);
# PREFIX (default /usr/local) is where the binary goes.
set -euo pipefail
cd "$(dirname "$0")/.."
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
binary=.build-release/release/itcb-dongle
uninstall=0
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=$2; shift ;;
        --uninstall) uninstall=1 ;;
        *) echo "install: unknown option $1"; exit 2 ;;
    esac
    shift
done
rules="$DESTDIR/etc/udev/rules.d/70-itcb-dongle.rules"
unit="$DESTDIR/etc/systemd/system/itcb-dongle@.service"
live() { [ -z "$DESTDIR" ]; }

if [ "$uninstall" = 1 ]; then
    rm -f "$DESTDIR$PREFIX/bin/itcb-dongle" "$rules" "$unit"
    if live; then
        userdel itcb 2>/dev/null || true
        groupdel itcb 2>/dev/null || true
        udevadm control --reload-rules 2>/dev/null || true
        systemctl daemon-reload 2>/dev/null || true
    fi
    echo "install: removed (kept /etc/default/itcb-dongle and /etc/itcb-dongle/dongles)"
    exit 0
fi

[ -x "$binary" ] || swift build -c release --static-swift-stdlib --product itcb-dongle --scratch-path .build-release
install -d "$DESTDIR$PREFIX/bin" "$(dirname "$rules")" "$(dirname "$unit")" "$DESTDIR/etc/default" "$DESTDIR/etc/itcb-dongle"
install -m 0755 "$binary" "$DESTDIR$PREFIX/bin/itcb-dongle"
# The rule and unit name /usr/bin/itcb-dongle: point them at PREFIX.
sed "s|/usr/bin/itcb-dongle|$PREFIX/bin/itcb-dongle|g" udev/70-itcb-dongle.rules > "$rules"
sed "s|/usr/bin/itcb-dongle|$PREFIX/bin/itcb-dongle|g" udev/itcb-dongle@.service > "$unit"
chmod 0644 "$rules" "$unit"
[ -e "$DESTDIR/etc/default/itcb-dongle" ] || install -m 0644 udev/itcb-dongle.default "$DESTDIR/etc/default/itcb-dongle"
[ -e "$DESTDIR/etc/itcb-dongle/dongles" ] || install -m 0644 udev/dongles "$DESTDIR/etc/itcb-dongle/dongles"
if live; then
    getent group itcb >/dev/null || groupadd --system itcb
    getent passwd itcb >/dev/null || useradd --system --gid itcb --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin itcb
    udevadm control --reload-rules 2>/dev/null || true
    udevadm trigger --subsystem-match=usb --action=change 2>/dev/null || true
    systemctl daemon-reload 2>/dev/null || true
fi
echo "install: done; list your dongle in $DESTDIR/etc/itcb-dongle/dongles"
