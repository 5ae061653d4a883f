#!/usr/bin/env bash
# itcb-dongle-setup pi-uart (the Pi's own radio handed over) in arm64 roots of
# Debian 12 or 13, laid out as a Raspberry Pi OS system and as Debian's raspi
# image:
#
#   Tests/Deployment/pi-setup-roots.sh SUITE DEB
#   Tests/Deployment/pi-setup-roots.sh --prepare SUITE
#
# (--prepare: only make the cached root, as scripts/test.sh's caches lane does.)
# Once, cached ($ITCB_CACHE, default ~/.cache/itcb-dongle/SUITE-arm64-layout):
# `debootstrap --arch arm64 --foreign --variant=minbase SUITE`: the release's
# arm64 file layout (usr-merged /lib, /etc/apt), ~40 MB from the mirror. Nothing
# runs inside it (no second stage): the script and `systemctl --root` run from
# this machine, as `itcb-dongle-setup --root DIR` is meant to. DEB's files are
# unpacked into a throw-away overlay (the script and unit are the same in
# every architecture's package), and the test writes what the OS would have:
#  - Raspberry Pi OS: /etc/rpi-issue, /boot/firmware/config.txt (ending in a
#    [cm4] section) and pi-bluetooth's hciuart.service (RPi-Distro/pi-bluetooth
#    0.1.19: ConditionFileNotEmpty=…/bt_pins/brcm,pins, ExecStart=/usr/bin/btuart,
#    WantedBy=dev-serial1.device);
#  - Debian's raspi image: /etc/default/raspi-firmware and the config.txt
#    raspi-firmware generates, and a device tree dump of a Pi 4.
# Each: the set-up writes its lines and files, masks hciuart, enables
# itcb-dongle@pi-uart (systemctl is-enabled); a second run changes no file and
# says "nothing to change"; --undo restores every file as it was; bad input
# (an unknown board, a device tree that is not a Pi's) is one line, exit 2.
set -euo pipefail
cd "$(dirname "$0")/../.."
prepare=0
if [ "${1:-}" = --prepare ]; then prepare=1; shift; fi
suite=${1:?usage: pi-setup-roots.sh bookworm|trixie DEB (or --prepare SUITE)}
deb=${2:-}
((prepare)) || [ -f "$deb" ] || { echo "usage: pi-setup-roots.sh bookworm|trixie DEB" >&2; exit 2; }
name=pi-setup-$suite
fail() { echo "$name: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, overlay mounts)"
command -v debootstrap >/dev/null || fail "needs debootstrap"
cache=${ITCB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/itcb-dongle}
base=$cache/$suite-arm64-layout

mkdir -p "$cache"
exec 9>"$base.lock"
flock 9
if [ ! -e "$base/.complete" ]; then
    mirror=${ITCB_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^ ]+/debian/?$' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null | head -1 || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    rm -rf "$base.tmp" "$base"
    echo "$name: debootstrap --arch arm64 --foreign --variant=minbase $suite from $mirror (once, cached in $base)"
    debootstrap --arch arm64 --foreign --variant=minbase "$suite" "$base.tmp" "$mirror" > "$base.log" 2>&1 \
        || fail "debootstrap failed (see $base.log)"
    rm -rf "$base.tmp/var/cache/apt/archives/"*.deb
    date -u +%F > "$base.tmp/.complete"
    mv "$base.tmp" "$base"
fi
exec 9>&-
((!prepare)) || exit 0
deb=$(realpath "$deb")

work=$(mktemp -d "/var/tmp/itcb-$name.XXXXXX")
root=$work/root
cleanup() { umount "$root" 2>/dev/null || umount -l "$root" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fresh_root() {  # a new throw-away overlay over the cached root, with the package's files
    umount "$root" 2>/dev/null || true
    rm -rf "$work/upper" "$work/work"
    mkdir -p "$work/upper" "$work/work" "$root"
    mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/work" "$root"
    dpkg-deb -x "$deb" "$root"
    [ -L "$root/lib" ] || fail "$suite's arm64 root is not usr-merged (/lib is no link)"
    mkdir -p "$root/etc/systemd/system/multi-user.target.wants"  # as on every systemd system
}
setup() { "$root/usr/sbin/itcb-dongle-setup" --root "$root" "$@" 2>&1; }
tree() { (cd "$root" && find etc boot usr/lib/systemd -printf '%p %l %m\n' -type f -exec md5sum {} + | LC_ALL=C sort); }
expect() {  # expect TEXT OUTPUT: a line of OUTPUT is TEXT
    grep -qxF -- "$1" <<< "$2" || { echo "$2"; fail "expected the line: $1"; }
}
enabled() { systemctl --root="$root" is-enabled "$1" 2>/dev/null || true; }

# Run twice (the second changes nothing), undo (all as before), undo again (nothing).
round_trip() {  # round_trip SETUP-ARGS… (label, checks and undo_line set by the caller)
    local out before
    before=$(tree)
    out=$(setup "$@" pi-uart) || { echo "$out"; fail "$label: set-up failed"; }
    echo "$out" | sed "s/^/  $label | /"
    first=$out
    after=$(tree)
    out=$(setup "$@" pi-uart) || { echo "$out"; fail "second run failed"; }
    expect "itcb-dongle-setup: nothing to change" "$out"
    [ "$(tree)" = "$after" ] || fail "$label: the second run changed files"
    checks
    out=$(setup --undo pi-uart) || { echo "$out"; fail "--undo failed"; }
    expect "$undo_line" "$out"
    [ "$(tree)" = "$before" ] || { diff <(echo "$before") <(tree) || true; fail "$label: --undo did not restore every file"; }
    out=$(setup --undo pi-uart)
    expect "itcb-dongle-setup: nothing to change" "$out"
    echo "$name: $label: set-up, a second run changing nothing, --undo restoring every file"
}

dropin=etc/systemd/system/itcb-dongle@pi-uart.service.d/itcb-dongle-setup.conf
release="Debian $(cat "$base/etc/debian_version") ($suite) arm64"

# --- Raspberry Pi OS-like -------------------------------------------------------
fresh_root
label="Raspberry Pi OS layout on $release"
echo "PRETTY_NAME test root" > "$root/etc/rpi-issue"
mkdir -p "$root/boot/firmware"
printf '%s\n' "# For more options and information see" "# http://rptl.io/configtxt" "dtparam=audio=on" \
    "arm_64bit=1" "[cm4]" "otg_mode=1" > "$root/boot/firmware/config.txt"
cat > "$root/usr/lib/systemd/system/hciuart.service" <<'UNIT'
[Unit]
Description=Configure Bluetooth Modems connected by UART
ConditionFileNotEmpty=/proc/device-tree/soc/gpio@7e200000/bt_pins/brcm,pins
Requires=dev-serial1.device
After=dev-serial1.device

[Service]
Type=forking
ExecStart=/usr/bin/btuart

[Install]
WantedBy=dev-serial1.device
UNIT
systemctl --root="$root" enable hciuart.service >/dev/null 2>&1
[ "$(enabled hciuart.service)" = enabled ] || fail "hciuart.service not enabled in the test root"
undo_line="itcb-dongle-setup: unmasked hciuart.service"
checks() {
    expect "itcb-dongle-setup: added dtparam=krnbt=off to /boot/firmware/config.txt (the kernel leaves the radio alone)" "$first"
    expect "itcb-dongle-setup: masked hciuart.service (pi-bluetooth would attach the radio with hciattach)" "$first"
    expect "itcb-dongle-setup: enabled itcb-dongle@pi-uart.service (starts at boot)" "$first"
    expect "itcb-dongle-setup: no Broadcom patchram files: sudo apt install bluez-firmware" "$first"
    expect "itcb-dongle-setup: reboot to hand the radio over (sudo reboot)" "$first"
    # After the [cm4] section: [all] first, or the line would apply to a CM4 only.
    [ "$(tail -n 4 "$root/boot/firmware/config.txt" | sed -n 2,3p)" = $'[all]\ndtparam=krnbt=off' ] \
        || { cat "$root/boot/firmware/config.txt"; fail "config.txt: no [all] + dtparam=krnbt=off at its end"; }
    [ "$(enabled hciuart.service)" = masked ] || fail "hciuart.service is $(enabled hciuart.service), not masked"
    [ "$(enabled itcb-dongle@pi-uart.service)" = enabled ] || fail "the instance is $(enabled itcb-dongle@pi-uart.service)"
    expect "ExecStart=/usr/bin/itcb-dongle --role \${ITCB_ROLE} --transport serial:/dev/serial1 --log-level \${ITCB_LOG_LEVEL} \$ITCB_EXTRA_ARGS" "$(cat "$root/$dropin")"
    expect "ConditionPathExists=" "$(cat "$root/$dropin")"
    expect "DeviceAllow=char-ttyAMA rw" "$(cat "$root/$dropin")"
}
round_trip
[ "$(enabled hciuart.service)" = enabled ] || fail "after --undo hciuart.service is $(enabled hciuart.service)"

# An hciuart the admin masked before stays masked after --undo.
systemctl --root="$root" mask hciuart.service >/dev/null 2>&1
setup pi-uart >/dev/null && setup --undo pi-uart >/dev/null
[ "$(enabled hciuart.service)" = masked ] || fail "--undo unmasked an hciuart.service it had not masked"
systemctl --root="$root" unmask hciuart.service >/dev/null 2>&1

# Bad input: one line, exit 2.
bad_input() {  # bad_input EXPECTED-LINE ARGS…
    local want=$1 out rc=0
    shift
    out=$("$root/usr/sbin/itcb-dongle-setup" --root "$root" "$@" 2>&1) || rc=$?
    [ "$rc" = 2 ] && [ "$out" = "$want" ] || fail "itcb-dongle-setup $*: exit $rc, said: $out (expected exit 2: $want)"
}
bad_input "itcb-dongle-setup: unknown board 'pi-usb' (pi-uart: the Raspberry Pi's own radio on its UART)" pi-usb
bad_input "itcb-dongle-setup: unknown option --flow (--undo, --root DIR, --device-tree DIR)" --flow pi-uart
mkdir -p "$work/dt-pc"
printf 'QEMU Virtual Machine\0' > "$work/dt-pc/model"
bad_input "itcb-dongle-setup: $work/dt-pc/model says 'QEMU Virtual Machine': not a Raspberry Pi" --device-tree "$work/dt-pc" pi-uart
mkdir -p "$work/dt-2b/soc/serial@7e201000"
printf 'Raspberry Pi 2 Model B Rev 1.1\0' > "$work/dt-2b/model"
bad_input "itcb-dongle-setup: no Bluetooth node on a UART in $work/dt-2b (Raspberry Pi 2 Model B Rev 1.1 has no radio of its own?)" \
    --device-tree "$work/dt-2b" pi-uart
rm -f "$root/etc/rpi-issue" "$root/usr/lib/systemd/system/hciuart.service"
rm -f "$root/etc/systemd/system/dev-serial1.device.wants/hciuart.service"
bad_input "itcb-dongle-setup: neither Raspberry Pi OS (no /etc/rpi-issue, no raspi.list) nor Debian's raspi image (no /etc/default/raspi-firmware) under $root" pi-uart
echo "$name: bad input (unknown board, unknown option, a PC's or a Pi 2's device tree, another system): one line, exit 2"

# --- Debian's raspi image -------------------------------------------------------
fresh_root
label="Debian raspi layout on $release"
mkdir -p "$root/boot/firmware" "$root/etc/default"
echo '#ROOTPART=LABEL=RASPIROOT' > "$root/etc/default/raspi-firmware"
printf '%s\n' "# Do not modify this file!" "#" "# It is automatically generated upon install or update of either the" \
    "# firmware or the Linux kernel." "arm_64bit=1" "enable_uart=1" "upstream_kernel=1" > "$root/boot/firmware/config.txt"
# A Pi 4's tree as Linux's bcm2711-rpi-4-b.dts has it: the radio under the PL011.
dt=$work/dt-pi4
mkdir -p "$dt/soc/serial@7e201000/bluetooth" "$dt/soc/serial@7e215040"
printf 'Raspberry Pi 4 Model B Rev 1.4\0' > "$dt/model"
printf 'brcm,bcm43438-bt\0' > "$dt/soc/serial@7e201000/bluetooth/compatible"
undo_line="itcb-dongle-setup: removed /boot/firmware/overlays/itcb-dongle-bt-off.dtbo"
checks() {
    expect "itcb-dongle-setup: wrote /boot/firmware/overlays/itcb-dongle-bt-off.dtbo (sets /soc/serial@7e201000/bluetooth's status to disabled: the UART keeps its tty)" "$first"
    expect "itcb-dongle-setup: added dtoverlay=itcb-dongle-bt-off to /etc/default/raspi-firmware-custom (raspi-firmware's config.txt keeps it)" "$first"
    expect "itcb-dongle-setup: added dtoverlay=itcb-dongle-bt-off to /boot/firmware/config.txt (for the next boot)" "$first"
    grep -q non-free-firmware <<< "$first" || fail "the non-free-firmware component is not named"
    [ "$(enabled itcb-dongle@pi-uart.service)" = enabled ] || fail "the instance is $(enabled itcb-dongle@pi-uart.service)"
    expect "ExecStart=/usr/bin/itcb-dongle --role \${ITCB_ROLE} --transport serial:/dev/ttyAMA0 --log-level \${ITCB_LOG_LEVEL} \$ITCB_EXTRA_ARGS" "$(cat "$root/$dropin")"
    grep -qxF "dtoverlay=itcb-dongle-bt-off" "$root/etc/default/raspi-firmware-custom" || fail "raspi-firmware-custom lacks the overlay"
    # The overlay, read back as a flattened device tree (devicetree.org specification, v17).
    out=$(python3 - "$root/boot/firmware/overlays/itcb-dongle-bt-off.dtbo" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, total, off_struct, off_strings, off_rsv, version, last, _, size_strings, size_struct = struct.unpack(">10I", b[:40])
assert magic == 0xD00DFEED and total == len(b) and version == 17 and last == 16, "header"
assert b[off_rsv:off_rsv + 16] == bytes(16), "reservation map"
strings = b[off_strings:off_strings + size_strings]
pos, path, lines = off_struct, [], []
while True:
    (token,) = struct.unpack(">I", b[pos:pos + 4]); pos += 4
    if token == 1:
        end = b.index(0, pos); path.append(b[pos:end].decode()); pos = (end + 4) & ~3
    elif token == 3:
        length, nameoff = struct.unpack(">II", b[pos:pos + 8]); pos += 8
        name = strings[nameoff:strings.index(0, nameoff)].decode()
        lines.append("/".join(path) + " " + name + "=" + b[pos:pos + length].rstrip(b"\0").decode())
        pos = (pos + length + 3) & ~3
    elif token == 2:
        path.pop()
    elif token == 9:
        break
    else:
        raise SystemExit("bad token %d" % token)
assert pos == off_struct + size_struct, "struct size"
print("\n".join(lines))
PY
) || fail "the overlay is not a valid flattened device tree: $out"
    [ "$out" = $'/fragment@0 target-path=/soc/serial@7e201000/bluetooth\n/fragment@0/__overlay__ status=disabled' ] \
        || fail "the overlay says: $out"
}
round_trip --device-tree "$dt"
