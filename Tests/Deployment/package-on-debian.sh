#!/usr/bin/env bash
# The package on a Debian release of its own, in a debootstrapped
# root: SUITE is bookworm (Debian 12) or trixie (Debian 13, where /lib is an
# alias of /usr/lib and lintian refuses files shipped under /lib).
#
#   Tests/Deployment/package-on-debian.sh [--lintian-only] SUITE DEB [DEB...]
#   Tests/Deployment/package-on-debian.sh --prepare SUITE
#
# (--lintian-only: lintian alone, for a package of another architecture, such
# as the arm64 one scripts/test-arm64.sh builds. --prepare: only make the cached
# root, as scripts/test.sh does early, beside the builds.)
# Once, cached ($ITCB_CACHE, default ~/.cache/itcb-dongle/SUITE-package):
# debootstrap --variant=minbase SUITE, then that release's lintian, systemd,
# udev and libusb-1.0-0. Each run works in a throw-away overlay over it
# (chroot), so the cached root stays clean, and checks:
#  - that release's lintian reports no error and no warning for every DEB
#    (the arm64 package too: lintian reads a foreign architecture's package);
#  - the first DEB (this machine's architecture) installs with dpkg, and
#    `dpkg -S` finds the rule and the unit at /usr/lib/udev/rules.d and
#    /usr/lib/systemd/system;
#  - systemd-analyze verify accepts an instance of the installed unit, and
#    (Debian 13; 12's udevadm has no verify) udevadm verify accepts the rule;
#  - itcb-dongle-setup pi-uart (on a Debian raspi layout the test writes) enables
#    its instance, and purge undoes it (postrm's own copy of the script);
#  - purge says no warning (such as a directory "not empty") and leaves no
#    file, directory, user or group behind, a per-dongle settings file
#    (/etc/itcb-dongle/1-1.2.conf, as README has the admin create) included.
# Needs root, debootstrap and the Debian mirror (the first time: a few minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."
lintian_only=0 prepare=0
if [ "${1:-}" = --lintian-only ]; then lintian_only=1; shift; fi
if [ "${1:-}" = --prepare ]; then prepare=1; shift; fi
suite=${1:?usage: package-on-debian.sh [--lintian-only] bookworm|trixie DEB [DEB...] (or --prepare SUITE)}
shift
((prepare)) || [ $# -ge 1 ] || { echo "usage: package-on-debian.sh bookworm|trixie DEB [DEB...]" >&2; exit 2; }
debs=()
for deb in "$@"; do debs+=("$(realpath "$deb")"); done
cache=${ITCB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/itcb-dongle}
name=package-on-$suite
. Tests/Deployment/debian-root.sh
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || fail "needs debootstrap"
[ -e "/usr/share/debootstrap/scripts/$suite" ] || fail "this debootstrap does not know $suite"

mkdir -p "$cache"
exec 9>"$cache/$suite-package.lock"
flock 9
cached_root "$suite" "$cache/$suite-package" "lintian systemd udev libusb-1.0-0"
exec 9>&-
((!prepare)) || exit 0
overlay_root "$cache/$suite-package"
mkdir -p "$root/tmp/debs"
for deb in "${debs[@]}"; do cp "$deb" "$root/tmp/debs/"; done
release="Debian $(cat "$root/etc/debian_version") ($suite), lintian $(in_root "$root" 'lintian --version' | awk '{ print $2 }')"
echo "$name: $release"

status=0
for deb in "${debs[@]}"; do
    file=$(basename "$deb")
    # (as root in the chroot: lintian's note about root privileges is not about the package)
    out=$(in_root "$root" "lintian --tag-display-limit 0 /tmp/debs/$file 2>&1" | grep -v 'root privileges is not recommended' || true)
    [ -z "$out" ] || echo "$out" | sed 's/^/  | /'
    if grep -q '^[EW]:' <<< "$out"; then echo "$name: lintian: errors or warnings for $file"; status=1
    else echo "$name: lintian: $file clean"; fi
done
((status == 0)) || exit 1
((lintian_only == 0)) || exit 0

first=/tmp/debs/$(basename "${debs[0]}")
in_root "$root" "dpkg -i $first" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "dpkg -i failed"; }
for path in /usr/bin/itcb-dongle /usr/lib/udev/rules.d/70-itcb-dongle.rules /usr/lib/systemd/system/itcb-dongle@.service; do
    owner=$(in_root "$root" "dpkg -S $path 2>&1" || true)
    [ "$owner" = "itcb-dongle: $path" ] || fail "dpkg -S $path: $owner"
done
in_root "$root" 'getent passwd itcb && getent group itcb' >/dev/null || fail "no itcb user or group after install"
echo "$name: installed; dpkg -S finds the binary, rule and unit at their /usr paths"

out=$(in_root "$root" 'cp /usr/lib/systemd/system/itcb-dongle@.service /tmp/itcb-dongle@1-1.2.service &&
    systemd-analyze verify --man=no /tmp/itcb-dongle@1-1.2.service 2>&1') || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
if in_root "$root" 'udevadm verify --help' >/dev/null 2>&1; then
    out=$(in_root "$root" 'udevadm verify /usr/lib/udev/rules.d/70-itcb-dongle.rules 2>&1') || fail "udevadm verify: $out"
    echo "$name: systemd-analyze verify clean; udevadm verify: $(tail -n 1 <<< "$out")"
else
    echo "$name: systemd-analyze verify clean (this udevadm has no verify)"
fi

# The Pi's radio handed over (itcb-dongle-setup pi-uart, on a Debian raspi layout the
# test writes, with systemctl offline in the chroot): purge must hand it back.
in_root "$root" 'mkdir -p /boot/firmware /etc/systemd/system/multi-user.target.wants &&
    echo "#ROOTPART=LABEL=RASPIROOT" > /etc/default/raspi-firmware && echo arm_64bit=1 > /boot/firmware/config.txt'
out=$(in_root "$root" 'itcb-dongle-setup pi-uart --device-tree /nonexistent 2>&1'; echo "rc=$?")
grep -qx 'rc=2' <<< "$out" || fail "itcb-dongle-setup without a device tree: $out"
mkdir -p "$root/tmp/dt/soc/serial@7e201000/bluetooth" && printf 'Raspberry Pi 4 Model B Rev 1.4\0' > "$root/tmp/dt/model"
out=$(in_root "$root" 'itcb-dongle-setup --device-tree /tmp/dt pi-uart 2>&1') || fail "itcb-dongle-setup pi-uart: $out"
[ "$(in_root "$root" 'systemctl is-enabled itcb-dongle@pi-uart.service')" = enabled ] || fail "set-up: instance not enabled: $out"
echo "$name: itcb-dongle-setup pi-uart: $(grep -c '' <<< "$out") lines, the instance enabled"
in_root "$root" 'mkdir -p /var/log/itcb-dongle && echo "ITCB_NAME=Counter 2" > /etc/itcb-dongle/1-1.2.conf'
out=$(in_root "$root" 'dpkg --purge itcb-dongle 2>&1') || fail "dpkg --purge failed: $out"
! grep -qi 'warning' <<< "$out" || fail "purge warned: $(grep -i warning <<< "$out")"
for path in /usr/bin/itcb-dongle /usr/lib/udev/rules.d/70-itcb-dongle.rules /usr/lib/systemd/system/itcb-dongle@.service \
    /etc/default/itcb-dongle /etc/itcb-dongle /var/log/itcb-dongle /etc/systemd/system/itcb-dongle@pi-uart.service.d \
    /etc/systemd/system/multi-user.target.wants/itcb-dongle@pi-uart.service /etc/default/raspi-firmware-custom \
    /boot/firmware/overlays/itcb-dongle-bt-off.dtbo /usr/sbin/itcb-dongle-setup; do
    [ ! -e "$root$path" ] || fail "purge left $path"
done
! in_root "$root" 'getent passwd itcb || getent group itcb' >/dev/null || fail "purge left the itcb user or group"
[ "$(cat "$root/boot/firmware/config.txt")" = arm_64bit=1 ] || fail "purge left config.txt: $(cat "$root/boot/firmware/config.txt")"
echo "$name: purged without a warning; no file, directory, user or group left; the Pi's radio set-up undone"
