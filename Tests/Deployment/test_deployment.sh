#!/usr/bin/env bash
# Deployment checks (issue 5) that need no USB bus: the .deb builds and passes
# lintian, systemd accepts the unit, the package installs into a scratch root
# (creating the itcb user through its postinst) and purges cleanly, install.sh
# stages the same files, and the udev rule and its matcher do what they say.
# Ends with "deployment: N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0
failed=0
check() {  # check NAME COMMAND...
    local name=$1
    shift
    if output=$("$@" 2>&1); then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        echo "$output" | sed 's/^/     /' | tail -n 20
    fi
}

missing=()
for p in lintian systemd dpkg-dev passwd; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
deb=${ITCB_DEB:-}
binary=${ITCB_DONGLE_RELEASE_BIN:-.build-release/release/itcb-dongle}
if [ -z "$deb" ]; then
    build_args=()
    [ -n "${ITCB_DONGLE_RELEASE_BIN:-}" ] && build_args=(--binary "$ITCB_DONGLE_RELEASE_BIN")
    scripts/build-deb.sh "${build_args[@]}" > "$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; echo "deployment: 0 passed, 1 failed"; exit 1; }
    deb=$(sed -n 's/^build-deb: //p' "$scratch/build.log")
fi

lintian_clean() {
    local out
    out=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v "root privileges")
    echo "$out"
    ! echo "$out" | grep -q '^[EW]:'
}
check "lintian: no errors or warnings" lintian_clean

unit_verifies() {
    # verify needs the ExecStart binary: point a copy of the unit (as an instance) at ours.
    mkdir -p "$scratch/unit"
    sed "s|/usr/bin/itcb-dongle|$(realpath "$binary")|" udev/itcb-dongle@.service > "$scratch/unit/itcb-dongle@1-1.2.service"
    local out
    out=$(systemd-analyze verify --man=no "$scratch/unit/itcb-dongle@1-1.2.service" 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    [ -z "$out" ]  # warnings (unknown keys, bad values) count as failures
}
check "systemd-analyze verify accepts the unit" unit_verifies

unit_hardening() {
    local u=udev/itcb-dongle@.service
    for line in "Type=notify" "User=itcb" "Group=itcb" "WatchdogSec=" "Restart=on-failure" "NoNewPrivileges=yes" \
        "ProtectSystem=strict" "ProtectHome=yes" "PrivateTmp=yes" "PrivateNetwork=yes" \
        "RestrictAddressFamilies=AF_UNIX AF_NETLINK" "DevicePolicy=closed" "DeviceAllow=char-usb_device rw" \
        "SystemCallFilter=@system-service" "MemoryDenyWriteExecute=yes" "LockPersonality=yes" \
        "CapabilityBoundingSet=" "EnvironmentFile=-/etc/default/itcb-dongle" "--transport usb:%i" "--exit-on-unplug"; do
        grep -qF -- "$line" "$u" || { echo "missing: $line"; return 1; }
    done
}
check "unit: notify, unprivileged, hardened" unit_hardening

rule_is_safe() {
    local r=udev/70-itcb-dongle.rules
    grep -v '^#' "$r" > "$scratch/rule"
    ! grep -q '0666' "$scratch/rule" || { echo "world-writable"; return 1; }
    ! grep -q 'RUN+=' "$scratch/rule" || { echo "RUN+= starts services racily"; return 1; }
    grep -q 'GROUP="itcb", MODE="0660"' "$scratch/rule" && grep -q 'TAG+="systemd"' "$scratch/rule" \
        && grep -q 'ENV{SYSTEMD_WANTS}+="itcb-dongle@$env{ITCB_INSTANCE}.service"' "$scratch/rule" \
        && grep -q 'ENV{ITCB_CONFIGURED}=="1"' "$scratch/rule" && grep -q -- '--udev-match /sys%p' "$scratch/rule"
}
check "rule: group itcb 0660, systemd tag, no RUN+=, only configured dongles" rule_is_safe

# The matcher against fake sysfs trees (descriptors as the kernel caches them).
make_device() {  # make_device DIR DEVICE_CLASS IF0_CLASS [IF1_CLASS] VID PID
    python3 - "$@" <<'PY'
import os, struct, sys
path, dev_class, if0, if1, vid, pid = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16), sys.argv[4], int(sys.argv[5], 16), int(sys.argv[6], 16)
sub = 1 if dev_class == 0xE0 else 0
device = struct.pack('<BBHBBBBHHHBBBB', 18, 1, 0x200, dev_class, sub, sub, 64, vid, pid, 0x100, 0, 0, 0, 1)
def interface(number, cls):
    s = 1 if cls == 0xE0 else 0
    return struct.pack('<9B', 9, 4, number, 0, 1, cls, s, s, 0) + struct.pack('<BBBBHB', 7, 5, 0x81 + number, 3, 16, 1)
body = interface(0, if0) + (interface(1, int(if1, 16)) if if1 != '-' else b'')
config = struct.pack('<BBHBBBBB', 9, 2, 9 + len(body), 2 if if1 != '-' else 1, 1, 0, 0x80, 50) + body
os.makedirs(path, exist_ok=True)
open(os.path.join(path, 'descriptors'), 'wb').write(device + config)
PY
}
printf '# test\n0a12:0001   # CSR8510\n2-3.1\n' > "$scratch/dongles"
match() { ITCB_DONGLES_FILE="$scratch/dongles" "$binary" --udev-match "$1" | tr '\n' ' '; }
matcher_cases() {
    make_device "$scratch/sys/1-1" e0 e0 - 0a12 0001      # dongle, configured by VID:PID
    make_device "$scratch/sys/2-3.1" 00 e0 - 0b05 17cb    # class per interface, configured by path
    make_device "$scratch/sys/1-4" e0 e0 - 8087 0029      # laptop's built-in controller: not configured
    make_device "$scratch/sys/1-5" ef ff e0 0bda b00a     # combo card: Bluetooth on interface 1
    make_device "$scratch/sys/1-6" 00 08 - 0781 5567      # a USB stick
    [ "$(match "$scratch/sys/1-1")" = "ITCB_BLUETOOTH=1 ITCB_CONFIGURED=1 ITCB_INSTANCE=1-1 " ] || { match "$scratch/sys/1-1"; return 1; }
    [ "$(match "$scratch/sys/2-3.1")" = "ITCB_BLUETOOTH=1 ITCB_CONFIGURED=1 ITCB_INSTANCE=2-3.1 " ] || return 1
    [ "$(match "$scratch/sys/1-4")" = "ITCB_BLUETOOTH=1 ITCB_CONFIGURED=0 " ] || return 1
    [ "$(match "$scratch/sys/1-5")" = "ITCB_BLUETOOTH=0 " ] || return 1
    [ "$(match "$scratch/sys/1-6")" = "ITCB_BLUETOOTH=0 " ] || return 1
    [ "$(match "$scratch/sys/none")" = "ITCB_BLUETOOTH=0 " ] || return 1
}
check "matcher: Bluetooth by interface 0, only configured dongles start the unit" matcher_cases

dpkg_root_install() {
    local root="$scratch/root"
    mkdir -p "$root/etc" "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/usr/sbin"
    : > "$root/var/lib/dpkg/status"
    printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
    printf 'root:x:0:\n' > "$root/etc/group"
    printf 'root:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
    printf 'root:*::\n' > "$root/etc/gshadow"
    chmod 0640 "$root/etc/shadow" "$root/etc/gshadow"
    dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root -i "$deb" || return 1
    grep -q '^itcb:x:[0-9]*:' "$root/etc/group" || { echo "no itcb group"; return 1; }
    grep -q '^itcb:x:[0-9]*:[0-9]*::/nonexistent:/usr/sbin/nologin' "$root/etc/passwd" || { cat "$root/etc/passwd"; return 1; }
    for f in usr/bin/itcb-dongle lib/udev/rules.d/70-itcb-dongle.rules lib/systemd/system/itcb-dongle@.service \
        etc/default/itcb-dongle etc/itcb-dongle/dongles usr/share/doc/itcb-dongle/copyright; do
        [ -e "$root/$f" ] || { echo "missing $f"; return 1; }
    done
    dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root --purge itcb-dongle || return 1
    ! grep -q '^itcb:' "$root/etc/passwd" "$root/etc/group" || { echo "user left behind"; return 1; }
    [ ! -e "$root/usr/bin/itcb-dongle" ] && [ ! -e "$root/etc/default/itcb-dongle" ]
}
check "dpkg --root install creates the itcb user, files land; purge undoes it" dpkg_root_install

staged_install() {
    local dest="$scratch/staged"
    DESTDIR="$dest" scripts/install.sh --binary "$binary" || return 1
    [ -x "$dest/usr/local/bin/itcb-dongle" ] && grep -q '/usr/local/bin/itcb-dongle --udev-match' "$dest/etc/udev/rules.d/70-itcb-dongle.rules" \
        && grep -q 'ExecStart=/usr/local/bin/itcb-dongle' "$dest/etc/systemd/system/itcb-dongle@.service" \
        && [ -e "$dest/etc/default/itcb-dongle" ] && [ -e "$dest/etc/itcb-dongle/dongles" ] || return 1
    echo "ITCB_NAME=Mine" > "$dest/etc/default/itcb-dongle"
    DESTDIR="$dest" scripts/install.sh --binary "$binary" >/dev/null || return 1
    grep -q Mine "$dest/etc/default/itcb-dongle" || { echo "options overwritten"; return 1; }
    DESTDIR="$dest" scripts/install.sh --uninstall >/dev/null || return 1
    [ ! -e "$dest/usr/local/bin/itcb-dongle" ] && [ ! -e "$dest/etc/udev/rules.d/70-itcb-dongle.rules" ]
}
check "install.sh stages, keeps options, uninstalls" staged_install

echo "deployment: $passed passed, $failed failed"
((failed == 0))
