#!/usr/bin/env bash
# Installs itcb-dongle on a system without dpkg (what the .deb does, by hand):
#   $PREFIX/bin/itcb-dongle                       (PREFIX default /usr/local)
#   /etc/udev/rules.d/70-itcb-dongle.rules         the udev rule
#   /etc/systemd/system/itcb-dongle@.service       the systemd template unit
#   /etc/default/itcb-dongle                       options (kept if present)
#   /etc/itcb-dongle/dongles                       which dongles start (kept if present)
#   $PREFIX/share/doc/itcb-dongle/README.md
#   $PREFIX/share/itcb-dongle/                     Grafana dashboard, Prometheus alert rules (monitoring/)
#   $PREFIX/share/man/man1/itcb-dongle.1            man page (from the option table, at build time)
#   $PREFIX/share/bash-completion/completions/itcb-dongle   shell completion
#   $PREFIX/share/zsh/site-functions/_itcb-dongle
# (`make install`, which holds the list), then creates the system user and group
# "itcb" and reloads udev and systemd.
# The rule and unit name /usr/bin/itcb-dongle; they are rewritten to
# $PREFIX/bin/itcb-dongle.
#
# Usage: sudo scripts/install.sh [--binary PATH]    without --binary it builds the binary
#             the package ships (scripts/build-deb.sh --build-only: Embedded Swift,
#             libc, libm and libusb-1.0 only) and installs it stripped, as the package
#             does; --binary installs one built before (e.g. by build-deb.sh).
#        sudo scripts/install.sh --uninstall        stops the instances, removes the
#             files above but the two in /etc that hold your settings, the user
#             and group; --purge removes those two files as well.
# DESTDIR=DIR stages everything under DIR (for packaging and tests): no root
# needed, no user created, nothing reloaded or stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
binary=""
mode=install
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=$2; shift ;;
        --uninstall) mode=uninstall ;;
        --purge) mode=purge ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "install: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

bin="$DESTDIR$PREFIX/bin/itcb-dongle"
doc="$DESTDIR$PREFIX/share/doc/itcb-dongle"
data="$DESTDIR$PREFIX/share/itcb-dongle"
man="$DESTDIR$PREFIX/share/man/man1/itcb-dongle.1"
setup="$DESTDIR$PREFIX/sbin/itcb-dongle-setup"
setup_man="$DESTDIR$PREFIX/share/man/man8/itcb-dongle-setup.8"
bash_completion="$DESTDIR$PREFIX/share/bash-completion/completions/itcb-dongle"
zsh_completion="$DESTDIR$PREFIX/share/zsh/site-functions/_itcb-dongle"
fish_completion="$DESTDIR$PREFIX/share/fish/vendor_completions.d/itcb-dongle.fish"
rules="$DESTDIR/etc/udev/rules.d/70-itcb-dongle.rules"
unit="$DESTDIR/etc/systemd/system/itcb-dongle@.service"
defaults="$DESTDIR/etc/default/itcb-dongle"
dongles="$DESTDIR/etc/itcb-dongle/dongles"
live() { [ -z "$DESTDIR" ]; }
systemd_running() { live && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }
udev_running() { live && [ -S /run/udev/control ] && command -v udevadm >/dev/null 2>&1; }
if live && [ "$(id -u)" -ne 0 ]; then
    echo "install: run as root (sudo), or set DESTDIR to stage the files" >&2
    exit 1
fi

if [ "$mode" != install ]; then
    if systemd_running; then
        for u in $(systemctl list-units --plain --no-legend --state=active 'itcb-dongle@*.service' | awk '{ print $1 }'); do
            systemctl stop "$u" || true
        done
    fi
    # Purge gives a Pi's radio back first (itcb-dongle-setup --undo: nothing where it never ran).
    if [ "$mode" = purge ] && [ -x "$setup" ]; then "$setup" --undo --root "${DESTDIR:-/}" pi-uart || true; fi
    rm -f "$bin" "$setup" "$setup_man" "$rules" "$unit" "$defaults.dist" "$dongles.dist" "$man" "$bash_completion" "$zsh_completion" "$fish_completion"
    rm -rf "$doc" "$data"
    if live; then rm -f /var/lib/prometheus/node-exporter/itcb-dongle-*.prom; fi  # the units' metrics links
    if [ "$mode" = purge ]; then
        rm -f "$defaults" "$dongles" "$(dirname "$dongles")"/*.conf
        rmdir "$(dirname "$dongles")" 2>/dev/null || true
    fi
    if live; then
        getent passwd itcb >/dev/null && { userdel itcb || true; }
        getent group itcb >/dev/null && { groupdel itcb || true; }
        rm -rf /var/log/itcb-dongle /var/lib/itcb-dongle
    fi
    if systemd_running; then systemctl daemon-reload || true; fi
    if udev_running; then udevadm control --reload || true; fi
    if [ "$mode" = purge ]; then
        echo "install: removed itcb-dongle and its settings"
    else
        echo "install: removed itcb-dongle (kept /etc/default/itcb-dongle and /etc/itcb-dongle/dongles; --purge removes them)"
    fi
    exit 0
fi

if [ -z "$binary" ]; then
    echo "install: building the binary the package ships (scripts/build-deb.sh --build-only)"
    binary=$(scripts/build-deb.sh --build-only)
fi
[ -x "$binary" ] || { echo "install: no binary at $binary" >&2; exit 1; }
echo "install: $binary → $bin (stripped), man page, completion, udev rule, systemd unit, settings"
# The file list is the Makefile's install target (the .deb's too, scripts/build-deb.sh):
# the man page and completion come from the option table, written at build time.
make --no-print-directory install DESTDIR="$DESTDIR" PREFIX="$PREFIX" BINARY="$binary"

if live; then
    nologin=$(command -v nologin || echo /usr/sbin/nologin)
    getent group itcb >/dev/null || groupadd --system itcb
    getent passwd itcb >/dev/null || useradd --system --gid itcb --no-create-home --home-dir /nonexistent \
        --shell "$nologin" --comment "itcb-dongle appliance" itcb
fi
if systemd_running; then systemctl daemon-reload; fi
if udev_running; then
    udevadm control --reload
    udevadm trigger --subsystem-match=usb --action=change
fi
echo "install: done. List your dongle in ${DESTDIR}/etc/itcb-dongle/dongles (itcb-dongle --list-controllers shows it),"
echo "install: then: sudo udevadm trigger --subsystem-match=usb --action=add (or re-plug it)."
