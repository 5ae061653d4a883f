#!/usr/bin/env bash
# Deployment checks that need no USB bus and no systemd as PID 1:
#  - the .deb builds (scripts/build-deb.sh) with the right contents, modes,
#    conffiles and Depends (libc6, libusb-1.0-0 only), its binary needs no
#    libswift*/libstdc++ shared library, and lintian reports no errors or
#    warnings;
#  - systemd-analyze verify accepts the unit (a copy pointed at the packaged
#    binary, named as an instance) and its offline security exposure is low;
#    the unit has the promised hardening and flags;
#  - the udev rule is safe on its face (group itcb 0660, never 0666, no RUN+=,
#    TAG+="systemd"/SYSTEMD_WANTS only for configured dongles), its matcher
#    classifies fake sysfs devices right, and the real udev rule engine
#    (`udevadm test`, offline, in a private mount namespace over a fake /sys)
#    applies it together with the system's rules: configured dongle → group
#    itcb, 0660, SYSTEMD_WANTS=itcb-dongle@<bus-port>.service; unconfigured
#    dongle or built-in controller → group itcb, 0660, no SYSTEMD_WANTS;
#    non-Bluetooth device → untouched;
#  - the package installs into a scratch root with `dpkg --root` (its postinst
#    creates the itcb user and group there), reinstalls, removes (keeping the
#    settings) and purges (removing the user);
#  - scripts/install.sh stages the same files under DESTDIR (the binary byte
#    for byte as the package has it), keeps settings, uninstalls and purges;
#  - on debootstrapped Debian 13 and 12 roots (Tests/Deployment/package-on-debian.sh):
#    that release's lintian is clean, the package installs (dpkg -S finds the
#    rule and unit under /usr/lib), the unit and rule verify, purge leaves nothing;
#  - the demo's set-up installs only what the demo needs on a clean Debian 12
#    root (Tests/Deployment/demo-setup-clean-debian.sh).
# The live udev/systemd behaviour (plug → unit active, unplug → inactive) is
# proven in the QEMU guest: Tests/USBFixture/test_udev.py, test_systemd.py.
#
# Usage: Tests/Deployment/test_deployment.sh        (as root: apt, unshare)
#   ITCB_DEB=out/itcb-dongle_X_amd64.deb  test that package instead of building one
# Ends with "deployment: N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0
failed=0
skipped=0
check() {  # check NAME FUNCTION [ARGS...]
    local name=$1 output
    shift
    if output=$("$@" 2>&1); then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        echo "$output" | tail -n 30 | sed 's/^/     /'
    fi
}
skip() { skipped=$((skipped + 1)); echo "skip $1"; }
finish() {
    local summary="deployment: $passed passed, $failed failed"
    ((skipped)) && summary="$summary, $skipped skipped"
    echo "$summary"
    ((failed == 0))
    exit
}

# Tools (Debian packages), installed when missing.
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
missing=()
for p in lintian systemd udev dpkg-dev passwd binutils python3 util-linux man-db prometheus; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing ${missing[*]}"
    "${as_root[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null || { failed=1; echo "FAIL apt-get install"; finish; }
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
deb=${ITCB_DEB:-}
if [ -z "$deb" ]; then
    echo "building the package (scripts/build-deb.sh)"
    if ! scripts/build-deb.sh > "$scratch/build.log" 2>&1; then
        sed 's/^/     /' "$scratch/build.log" | tail -n 40
        failed=1
        echo "FAIL scripts/build-deb.sh"
        finish
    fi
    deb=$(sed -n 's/^build-deb: built //p' "$scratch/build.log")
fi
[ -f "$deb" ] || { failed=1; echo "FAIL no package at '$deb'"; finish; }
echo "package: $deb"
# Everything below uses the packaged files, binary included.
pkg="$scratch/pkg"
dpkg-deb -R "$deb" "$pkg"
binary="$pkg/usr/bin/itcb-dongle"

package_contents() {
    local listing expected
    listing=$(dpkg-deb -c "$deb" | awk '{ print $1, $2, $6 }')
    for expected in \
        "-rwxr-xr-x root/root ./usr/bin/itcb-dongle" \
        "-rwxr-xr-x root/root ./usr/sbin/itcb-dongle-setup" \
        "-rw-r--r-- root/root ./usr/share/man/man8/itcb-dongle-setup.8.gz" \
        "-rw-r--r-- root/root ./usr/lib/udev/rules.d/70-itcb-dongle.rules" \
        "-rw-r--r-- root/root ./usr/lib/systemd/system/itcb-dongle@.service" \
        "-rw-r--r-- root/root ./etc/default/itcb-dongle" \
        "-rw-r--r-- root/root ./etc/itcb-dongle/dongles" \
        "-rw-r--r-- root/root ./usr/share/doc/itcb-dongle/copyright" \
        "-rw-r--r-- root/root ./usr/share/doc/itcb-dongle/changelog.gz" \
        "-rw-r--r-- root/root ./usr/share/man/man1/itcb-dongle.1.gz" \
        "-rw-r--r-- root/root ./usr/share/bash-completion/completions/itcb-dongle" \
        "-rw-r--r-- root/root ./usr/share/zsh/vendor-completions/_itcb-dongle" \
        "-rw-r--r-- root/root ./usr/share/fish/vendor_completions.d/itcb-dongle.fish" \
        "-rw-r--r-- root/root ./usr/share/doc/itcb-dongle/README.md" \
        "-rw-r--r-- root/root ./usr/share/itcb-dongle/grafana/itcb-dongle-dashboard.json" \
        "-rw-r--r-- root/root ./usr/share/itcb-dongle/prometheus/itcb-dongle-rules.yml" \
        "-rw-r--r-- root/root ./usr/share/itcb-dongle/prometheus/itcb-dongle-rules.test.yml"; do
        grep -qxF -- "$expected" <<< "$listing" || { echo "missing: $expected"; echo "$listing"; return 1; }
    done
    # The docs README, --help, the man page and the unit point at are in the package, where they point.
    local link
    for link in $(grep -oE '\(docs/[A-Z-]+\.md' README.md | tr -d '(' | sort -u); do
        cmp -s "$link" "$pkg/usr/share/doc/itcb-dongle/$link" || { echo "not packaged: $link (README links it)"; return 1; }
    done
    for link in $(cat "$pkg/usr/lib/systemd/system/itcb-dongle@.service" <("$pkg/usr/bin/itcb-dongle" --help) \
                  | grep -oE '/usr/share/doc/itcb-dongle/[A-Za-z/.-]+\.md' | sort -u); do
        [ -f "$pkg$link" ] || { echo "not packaged: $link (the unit or --help names it)"; return 1; }
    done
    # The packaged rules as shipped, and still passing promtool (the suite's machine has it: scripts/setup.sh).
    cmp -s monitoring/itcb-dongle-rules.yml "$pkg/usr/share/itcb-dongle/prometheus/itcb-dongle-rules.yml" \
        && cmp -s monitoring/itcb-dongle-dashboard.json "$pkg/usr/share/itcb-dongle/grafana/itcb-dongle-dashboard.json" \
        || { echo "packaged monitoring files differ from monitoring/"; return 1; }
    (cd "$pkg/usr/share/itcb-dongle/prometheus" && promtool check rules itcb-dongle-rules.yml \
        && promtool test rules itcb-dongle-rules.test.yml) || { echo "promtool fails on the packaged rules"; return 1; }
    cmp -s udev/70-itcb-dongle.rules "$pkg/usr/lib/udev/rules.d/70-itcb-dongle.rules" \
        && cmp -s udev/itcb-dongle@.service "$pkg/usr/lib/systemd/system/itcb-dongle@.service" \
        && cmp -s udev/itcb-dongle.default "$pkg/etc/default/itcb-dongle" \
        && cmp -s udev/dongles "$pkg/etc/itcb-dongle/dongles" || { echo "packaged files differ from udev/"; return 1; }
    [ "$(cat "$pkg/DEBIAN/conffiles")" = $'/etc/default/itcb-dongle\n/etc/itcb-dongle/dongles' ] \
        || { echo "conffiles:"; cat "$pkg/DEBIAN/conffiles"; return 1; }
    for script in postinst prerm postrm; do
        [ -x "$pkg/DEBIAN/$script" ] && sh -n "$pkg/DEBIAN/$script" || { echo "bad $script"; return 1; }
    done
    cmp -s packaging/itcb-dongle-setup "$pkg/usr/sbin/itcb-dongle-setup" || { echo "itcb-dongle-setup differs"; return 1; }
    # postrm carries the script itself (purge runs its --undo after the files are gone).
    sed -n "/<<'ITCB_DONGLE_SETUP'\$/,/^ITCB_DONGLE_SETUP\$/p" "$pkg/DEBIAN/postrm" | sed '1d; $d' \
        | cmp -s - packaging/itcb-dongle-setup || { echo "postrm does not carry itcb-dongle-setup"; return 1; }
    (cd "$pkg" && md5sum --quiet -c DEBIAN/md5sums) || return 1
    [ "$(dpkg-deb -f "$deb" Version)" = "$(tr -d ' \n' < VERSION)" ] || { echo "version is not VERSION's"; return 1; }
}
check "package: files, modes, conffiles, maintainer scripts, md5sums, VERSION" package_contents

# A package build on a machine that lacks its tools says which, in one line, before it
# builds anything: here dpkg-dev's dpkg-shlibdeps and the arm64 cross strip are hidden.
build_names_what_is_missing() {
    local bin="$scratch/bin" tool out code=0
    mkdir -p "$bin"
    for tool in /usr/bin/*; do
        case "${tool##*/}" in dpkg-shlibdeps|aarch64-linux-gnu-strip) ;; *) ln -sf "$tool" "$bin/" ;; esac
    done
    out=$(PATH="$bin:$(dirname "$(command -v swift)")" scripts/build-deb.sh --arch arm64 2>&1 >/dev/null) || code=$?
    [ "$code" = 1 ] && [ "$(wc -l <<< "$out")" = 1 ] || { echo "exit $code: $out"; return 1; }
    grep -qF "build-deb: an arm64 package build needs dpkg-dev, binutils-aarch64-linux-gnu: sudo apt-get install" \
        <<< "$out" && grep -qF "(or scripts/setup.sh --package arm64)" <<< "$out" || { echo "$out"; return 1; }
    [ "$(scripts/deb-tools.sh --packages amd64 | tr '\n' ' ')" = "make pkg-config libusb-1.0-0-dev binutils dpkg-dev gzip " ]
}
check "package build: a missing tool is named in one line, with the packages to install" build_names_what_is_missing

package_manual_and_completion() {
    local page="$scratch/itcb-dongle.1" option
    gzip -dc "$pkg/usr/share/man/man1/itcb-dongle.1.gz" > "$page"
    # man renders it without warnings, and it documents every option --help lists.
    local warnings
    warnings=$(LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null) || return 1
    [ -z "$warnings" ] || { echo "$warnings"; return 1; }
    for option in $("$binary" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
        grep -qF -- "\fB${option//-/\\-}\fR" "$page" || { echo "man page lacks $option"; return 1; }
    done
    grep -q -- "--role" "$pkg/usr/share/bash-completion/completions/itcb-dongle" \
        && bash -n "$pkg/usr/share/bash-completion/completions/itcb-dongle" \
        && grep -q '^#compdef itcb-dongle' "$pkg/usr/share/zsh/vendor-completions/_itcb-dongle" \
        && grep -q '^complete -c itcb-dongle' "$pkg/usr/share/fish/vendor_completions.d/itcb-dongle.fish" \
        || { echo "completion scripts"; return 1; }
    [ "$("$binary" --version)" = "$(tr -d ' \n' < VERSION)" ] || { echo "--version is not VERSION's"; return 1; }
}
check "package: man page (every --help option, no warnings), bash/zsh/fish completion, --version" package_manual_and_completion

package_depends() {
    local depends names needed
    depends=$(dpkg-deb -f "$deb" Depends)
    names=$(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/ //g' | sort | tr '\n' ' ')
    [ "$names" = "libc6 libusb-1.0-0 " ] || { echo "Depends: $depends"; return 1; }
    needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    echo "NEEDED: $(echo $needed)"
    ! grep -Eq 'libswift|libstdc\+\+|libgcc_s|libdispatch|libFoundation' <<< "$needed" || return 1
    # Whole outputs first: `ldd | grep -q` under pipefail fails when grep stops
    # reading before ldd is done writing (SIGPIPE).
    local libraries help
    libraries=$(ldd "$binary")
    grep -q 'libusb-1.0.so.0 => /' <<< "$libraries" || { echo "$libraries"; return 1; }
    ! grep -q 'not found' <<< "$libraries" || { echo "$libraries"; return 1; }
    help=$("$binary" --help)
    grep -q -- '--exit-on-unplug' <<< "$help"
}
check "package: Depends only libc6 + libusb-1.0-0; binary has no Swift/C++ runtime .so" package_depends

lintian_clean() {
    local out
    out=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v "root privileges is not recommended")
    echo "$out"
    ! grep -q '^[EW]:' <<< "$out"
}
check "lintian: no errors, no warnings" lintian_clean

# systemd-analyze wants ExecStart's binary to exist: a copy of the unit pointed
# at the packaged binary, named as an instance (%i = 1-1.2).
mkdir -p "$scratch/unit"
instance="$scratch/unit/itcb-dongle@1-1.2.service"
sed "s|/usr/bin/itcb-dongle|$binary|" udev/itcb-dongle@.service > "$instance"
unit_verifies() {
    local out
    out=$(systemd-analyze verify --man=no "$instance" 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    [ -z "$out" ]  # any warning (unknown key, bad value) fails
}
check "systemd-analyze verify accepts the unit" unit_verifies

# A TCP or serial instance is enabled at boot as DEPLOYMENT says (`systemctl enable`
# on an instance of the template), in a root of its own: enabled, then disabled.
unit_enables() {
    local root="$scratch/enable-root" out
    mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd/system"
    cp "$pkg/usr/lib/systemd/system/itcb-dongle@.service" "$root/usr/lib/systemd/system/"
    out=$(systemctl --root="$root" enable itcb-dongle@pi-uart.service 2>&1) || { echo "$out"; return 1; }
    [ "$(systemctl --root="$root" is-enabled itcb-dongle@pi-uart.service)" = enabled ] || return 1
    [ -L "$root/etc/systemd/system/multi-user.target.wants/itcb-dongle@pi-uart.service" ] || return 1
    systemctl --root="$root" disable itcb-dongle@pi-uart.service >/dev/null 2>&1
    [ "$(systemctl --root="$root" is-enabled itcb-dongle@pi-uart.service)" = disabled ]
}
check "systemctl enable starts a TCP or serial instance at boot ([Install])" unit_enables

# The TCP and serial drop-ins of docs/DEPLOYMENT.md (the same lines as the unit's header
# comment) on top of the unit: systemd-analyze loads and accepts them.
drop_ins_verify() {
    local kind block out
    for kind in tcp serial; do
        block=$(python3 - "$kind" <<'PY'
import re, sys
blocks = re.findall(r"```ini\n(.*?)```", open("docs/DEPLOYMENT.md").read(), re.S)
print(blocks[0 if sys.argv[1] == "tcp" else 1], end="")
PY
)
        [ -n "$block" ] || { echo "docs/DEPLOYMENT.md has no $kind drop-in"; return 1; }
        # The unit's comment has the same lines.
        while IFS= read -r line; do
            grep -qxF -- "#   $line" udev/itcb-dongle@.service || { echo "unit comment lacks: $line"; return 1; }
        done <<< "$block"
        mkdir -p "$scratch/dropin/itcb-dongle@$kind.service.d"
        sed "s|/usr/bin/itcb-dongle|$binary|" udev/itcb-dongle@.service > "$scratch/dropin/itcb-dongle@$kind.service"
        sed "s|/usr/bin/itcb-dongle|$binary|" <<< "$block" > "$scratch/dropin/itcb-dongle@$kind.service.d/override.conf"
        out=$(SYSTEMD_UNIT_PATH="$scratch/dropin:" systemd-analyze verify --man=no "$scratch/dropin/itcb-dongle@$kind.service" 2>&1) \
            || { echo "$out"; return 1; }
        [ -z "$out" ] || { echo "$out"; return 1; }
    done
}
check "docs/DEPLOYMENT.md TCP and serial drop-ins: as in the unit's comment, systemd-analyze accepts them" drop_ins_verify

unit_exposure() {
    # Exposure 0.0 (best) - 10.0; --threshold is in tenths. Ours: 0.5.
    systemd-analyze security --offline=yes --threshold=10 --no-pager "$instance" 2>&1 | tail -n 3
}
check "systemd-analyze security --offline: exposure at most 1.0" unit_exposure

unit_settings() {
    local u=udev/itcb-dongle@.service line
    for line in "Type=notify" "NotifyAccess=main" "User=itcb" "Group=itcb" "WatchdogSec=10" "Restart=on-failure" \
        "SuccessExitStatus=8" "EnvironmentFile=-/etc/default/itcb-dongle" "EnvironmentFile=-/etc/itcb-dongle/%i.conf" "ConditionPathExists=/sys/bus/usb/devices/%i" \
        "NoNewPrivileges=yes" "ProtectSystem=strict" "ProtectHome=yes" "PrivateTmp=yes" "PrivateNetwork=yes" \
        "RestrictAddressFamilies=AF_UNIX AF_NETLINK" "DevicePolicy=closed" "DeviceAllow=char-usb_device rw" \
        "SystemCallFilter=@system-service" "MemoryDenyWriteExecute=yes" "LockPersonality=yes" \
        "CapabilityBoundingSet=" "AmbientCapabilities=" "ProtectKernelTunables=yes" "ProtectKernelModules=yes" \
        "ProtectKernelLogs=yes" "ProtectControlGroups=yes" "RestrictNamespaces=yes" "RestrictRealtime=yes" \
        "RestrictSUIDSGID=yes" "PrivateUsers=yes" "UMask=0077"; do
        grep -qxF -- "$line" "$u" || { echo "missing line: $line"; return 1; }
    done
    grep -Eq '^RestartPreventExitStatus=.*\b2\b' "$u" && grep -Eq '^RestartPreventExitStatus=.*\b8\b' "$u" \
        || { echo "exit 2 and 8 must not restart"; return 1; }
    ! grep -Eq '^(User|Group)=root|^PermissionsStartOnly|^ExecStart=[+!]' "$u" || { echo "runs privileged"; return 1; }
    local exec
    exec=$(grep '^ExecStart=' "$u")
    for line in "/usr/bin/itcb-dongle " "--role \${ITCB_ROLE}" "--transport usb:%i " \
        "--log-level \${ITCB_LOG_LEVEL}" "--exit-on-unplug" "\$ITCB_EXTRA_ARGS"; do
        grep -qF -- "$line" <<< "$exec" || { echo "ExecStart lacks: $line"; return 1; }
    done
    # Role options come from the environment (the program reads them for its role):
    # on the command line the central would refuse --name and --answers.
    ! grep -Eq -- '--name|--answers|--question' <<< "$exec" || { echo "ExecStart passes a role's option"; return 1; }
    # The options file sets every variable the unit and the program use, with valid values.
    for line in "ITCB_ROLE=peripheral" "ITCB_NAME=8-Ball" "ITCB_ANSWERS=slug" "ITCB_QUESTION=" "ITCB_LOG_LEVEL=info" "ITCB_EXTRA_ARGS="; do
        grep -qxF -- "$line" udev/itcb-dongle.default || { echo "default file lacks $line"; return 1; }
    done
}
check "unit: notify + watchdog, unprivileged, hardened, options from /etc/default" unit_settings

rule_is_safe() {
    local r="$scratch/rule"
    grep -v '^[[:space:]]*#' udev/70-itcb-dongle.rules | grep -v '^[[:space:]]*$' > "$r"
    ! grep -Eq '0666|MODE="0?6[0-7][1-7]"' "$r" || { echo "world-accessible mode"; return 1; }
    ! grep -q 'RUN' "$r" || { echo "RUN+= races the device: start through systemd"; return 1; }
    ! grep -q 'uaccess\|OWNER=' "$r" || { echo "hands the node to a user"; return 1; }
    grep -qx 'GROUP="itcb", MODE="0660"' "$r" || { echo "no GROUP=itcb MODE=0660 line"; return 1; }
    grep -q 'IMPORT{program}="/usr/bin/itcb-dongle --udev-match /sys%p"' "$r" || return 1
    # GROUP/MODE only for Bluetooth devices, after the matcher said so.
    awk '/ITCB_BLUETOOTH}!="1", GOTO="itcb_dongle_end"/ { b = NR } /GROUP="itcb"/ { g = NR } END { exit !(b && g > b) }' "$r" \
        || { echo "GROUP applied before the Bluetooth check"; return 1; }
    # TAG+="systemd" and SYSTEMD_WANTS: only on the configured-dongle line.
    [ "$(grep -c 'TAG+="systemd"' "$r")" = 1 ] && [ "$(grep -c 'SYSTEMD_WANTS' "$r")" = 1 ] || return 1
    grep -qx 'ENV{ITCB_CONFIGURED}=="1", TAG+="systemd", ENV{SYSTEMD_WANTS}+="itcb-dongle@$env{ITCB_INSTANCE}.service"' "$r" \
        || { echo "systemd start not limited to configured dongles"; return 1; }
    grep -q '^ACTION=="remove", GOTO' "$r" && grep -q 'ENV{DEVTYPE}!="usb_device", GOTO' "$r" || return 1
    # The interface-class rule and the one place of configuration are documented.
    grep -q 'E0/01/01' udev/70-itcb-dongle.rules && grep -q 'interface 0' udev/70-itcb-dongle.rules \
        && grep -q '/etc/itcb-dongle/dongles' udev/70-itcb-dongle.rules
}
check "rule: group itcb 0660 (never 0666), no RUN+=, systemd tag + SYSTEMD_WANTS only when configured" rule_is_safe

# A fake sysfs: USB devices as the kernel shows them (uevent, subsystem link,
# the cached binary descriptors), under a made-up xHCI controller.
usb="$scratch/udev/sys/devices/pci0000:00/0000:00:14.0/usb1"
make_device() {  # make_device NAME DEVNUM DEVICE_CLASS IF0_CLASS IF1_CLASS|- VID PID
    python3 - "$usb" "$@" <<'PY'
import os, struct, sys
usb, name, devnum = sys.argv[1], sys.argv[2], int(sys.argv[3])
dev_class, if0, if1 = int(sys.argv[4], 16), int(sys.argv[5], 16), sys.argv[6]
vid, pid = int(sys.argv[7], 16), int(sys.argv[8], 16)
def triple(c):  # class, subclass, protocol: E0/01/01 for Bluetooth, EF/02/01 for IAD
    return (c, 1, 1) if c == 0xE0 else (c, 2, 1) if c == 0xEF else (c, 0, 0)
device = struct.pack('<BBHBBBBHHHBBBB', 18, 1, 0x200, *triple(dev_class), 64, vid, pid, 0x100, 0, 0, 0, 1)
def interface(number, cls):
    return struct.pack('<9B', 9, 4, number, 0, 1, *triple(cls), 0) + struct.pack('<BBBBHB', 7, 5, 0x81 + number, 3, 16, 1)
body = interface(0, if0) + (interface(1, int(if1, 16)) if if1 != '-' else b'')
config = struct.pack('<BBHBBBBB', 9, 2, 9 + len(body), 2 if if1 != '-' else 1, 1, 0, 0x80, 50) + body
path = os.path.join(usb, name)
os.makedirs(path)
os.symlink('../../../../../bus/usb', os.path.join(path, 'subsystem'))
open(os.path.join(path, 'descriptors'), 'wb').write(device + config)
open(os.path.join(path, 'uevent'), 'w').write(
    f"MAJOR=189\nMINOR={devnum - 1}\nDEVNAME=bus/usb/001/{devnum:03d}\nDEVTYPE=usb_device\nDRIVER=usb\n"
    f"PRODUCT={vid:x}/{pid:x}/100\nTYPE={'/'.join(str(x) for x in triple(dev_class))}\nBUSNUM=001\nDEVNUM={devnum:03d}\n")
for attr, value in (('dev', f'189:{devnum - 1}'), ('idVendor', f'{vid:04x}'), ('idProduct', f'{pid:04x}'),
                    ('busnum', '1'), ('devnum', str(devnum)), ('bDeviceClass', f'{dev_class:02x}')):
    open(os.path.join(path, attr), 'w').write(value + '\n')
PY
}
mkdir -p "$usb" "$scratch/udev/sys/bus/usb/devices"
make_device 1-1 2 e0 e0 - 0a12 0001      # CSR8510 dongle: class E0 on device and interface 0
make_device 1-3.1 3 00 e0 - 0b05 17cb    # class per interface (00), Bluetooth on interface 0
make_device 1-3.2 4 ef e0 e0 0bda 8771   # IAD (EF) device, Bluetooth on interface 0
make_device 1-4 5 e0 e0 - 8087 0029      # the laptop's built-in controller
make_device 1-5 6 ef ff e0 0bda b00a     # combo whose interface 0 is Wi-Fi: not ours
make_device 1-6 7 00 08 - 0781 5567      # a USB stick
dongles="$scratch/dongles"
configure() { printf '%b' "$1" > "$dongles"; }

matcher_cases() {
    local name expected got
    configure '# configured here\n0a12:0001   # CSR8510\n\n1-3.1\nusb:1-3.2\n'
    while read -r name expected; do
        got=$(ITCB_DONGLES_FILE="$dongles" "$binary" --udev-match "$usb/$name" | tr '\n' ' ' | sed 's/ $//')
        [ "$got" = "$expected" ] || { echo "$name: got '$got', want '$expected'"; return 1; }
    done <<'CASES'
1-1 ITCB_BLUETOOTH=1 ITCB_CONFIGURED=1 ITCB_INSTANCE=1-1
1-3.1 ITCB_BLUETOOTH=1 ITCB_CONFIGURED=1 ITCB_INSTANCE=1-3.1 
1-3.2 ITCB_BLUETOOTH=1 ITCB_CONFIGURED=1 ITCB_INSTANCE=1-3.2 
1-4 ITCB_BLUETOOTH=1 ITCB_CONFIGURED=0 
1-5 ITCB_BLUETOOTH=0 
1-6 ITCB_BLUETOOTH=0 
1-9 ITCB_BLUETOOTH=0 
CASES
    # A mistyped line is said (udev logs the helper's stderr), the good ones still count.
    configure '0a12:001\n1-1\n'
    got=$(ITCB_DONGLES_FILE="$dongles" "$binary" --udev-match "$usb/1-1" 2>&1 >/dev/null)
    [ "$got" = "itcb-dongle: warning: $dongles line 1: '0a12:001' is not a dongle (VID:PID such as 0a12:0001, or a bus-port path such as 1-1.2); ignored" ] \
        || { echo "mistyped line: '$got'"; return 1; }
    [ "$(ITCB_DONGLES_FILE="$dongles" "$binary" --udev-match "$usb/1-1" 2>/dev/null | tr '\n' ' ')" \
        = "ITCB_BLUETOOTH=1 ITCB_CONFIGURED=1 ITCB_INSTANCE=1-1 " ] || { echo "a good line after a bad one"; return 1; }
    # A FIFO where the dongles file should be, with no writer: read as empty, not waited on.
    rm -f "$scratch/fifo"; mkfifo "$scratch/fifo"
    [ "$(ITCB_DONGLES_FILE="$scratch/fifo" timeout 5 "$binary" --udev-match "$usb/1-1" | tr '\n' ' ')" \
        = "ITCB_BLUETOOTH=1 ITCB_CONFIGURED=0 " ] || { echo "a FIFO as the dongles file was waited on"; return 1; }
    # Nothing configured (the shipped file): no dongle starts anything.
    cp udev/dongles "$scratch/shipped"
    [ "$(ITCB_DONGLES_FILE="$scratch/shipped" "$binary" --udev-match "$usb/1-1" | tr '\n' ' ')" \
        = "ITCB_BLUETOOTH=1 ITCB_CONFIGURED=0 " ] || { echo "the shipped dongles file configures something"; return 1; }
}
check "matcher: E0/01/01 on device or interface 0 (00/EF devices too); only listed dongles configured" matcher_cases

# `udevadm test` runs the real rule engine on a device: here over the fake
# sysfs, with our rule (pointed at the packaged binary) among the system's
# rules and a copy of /etc holding the dongles file and the itcb group, in a
# private mount namespace so that nothing on this machine changes.
udev_test() {  # udev_test DEVICE → udevadm test output
    SYSTEMD_DEVICE_VERIFY_SYSFS=0 unshare --mount --propagation private sh -c '
        set -e
        mount --bind "$1/sys" /sys
        mount --bind "$1/etc" /etc
        mount -t tmpfs tmpfs /run
        mount --bind /dev/null "$1/dev/null"
        mount --rbind "$1/dev" /dev
        exec udevadm test --action=add "/sys/devices/pci0000:00/0000:00:14.0/usb1/$2"' sh "$scratch/udev" "$1" 2>&1
}
udev_cases() {
    local etc="$scratch/udev/etc" gid out
    mkdir -p "$scratch/udev/dev"
    : > "$scratch/udev/dev/null"
    cp -a /etc/. "$etc/" 2>/dev/null
    grep -q '^itcb:' "$etc/group" || echo 'itcb:x:990:' >> "$etc/group"
    gid=$(awk -F: '$1 == "itcb" { print $3 }' "$etc/group")
    mkdir -p "$etc/udev/rules.d" "$etc/itcb-dongle"
    rm -f "$etc/udev/rules.d/70-itcb-dongle.rules"
    sed "s|/usr/bin/itcb-dongle|$binary|" udev/70-itcb-dongle.rules > "$etc/udev/rules.d/70-itcb-dongle.rules"
    dongles="$etc/itcb-dongle/dongles"
    # expect DEVICE WANTS|none ITCB|default
    expect() {
        out=$(udev_test "$1")
        local mode group
        mode=$(grep -E '^[^ ]+: .* MODE [0-7]+$' <<< "$out" | tail -n 1 | awk '{ print $NF }')
        group=$(grep -E '^[^ ]+: .* GROUP [0-9]+$' <<< "$out" | tail -n 1 | awk '{ print $NF }')
        grep -q '^DEVNAME=/dev/bus/usb/001/' <<< "$out" || { echo "$1: udevadm test failed"; echo "$out" | tail -n 20; return 1; }
        if [ "$3" = itcb ]; then
            [ "$mode" = 0660 ] && [ "$group" = "$gid" ] || { echo "$1: mode $mode group $group"; return 1; }
        else
            [ "$mode" != 0660 ] && [ "$group" != "$gid" ] || { echo "$1: mode $mode group $group"; return 1; }
        fi
        if [ "$2" = none ]; then
            ! grep -q '^SYSTEMD_WANTS=' <<< "$out" && ! grep -q '^TAGS=.*:systemd:' <<< "$out" \
                || { echo "$1: started a unit"; grep -E '^(SYSTEMD_WANTS|TAGS|ITCB_)' <<< "$out"; return 1; }
        else
            grep -qx "SYSTEMD_WANTS=$2" <<< "$out" && grep -q '^TAGS=.*:systemd:' <<< "$out" \
                || { echo "$1: wanted $2"; grep -E '^(SYSTEMD_WANTS|TAGS|ITCB_)' <<< "$out"; return 1; }
        fi
        echo "$1: mode $mode group $group $(grep '^SYSTEMD_WANTS=' <<< "$out")"
    }
    cp udev/dongles "$dongles"          # as shipped: nothing configured
    expect 1-1 none itcb || return 1
    expect 1-4 none itcb || return 1
    configure '0a12:0001\n1-3.1\n'      # by VID:PID and by port
    expect 1-1 itcb-dongle@1-1.service itcb || return 1
    expect 1-3.1 itcb-dongle@1-3.1.service itcb || return 1
    expect 1-3.2 none itcb || return 1
    expect 1-4 none itcb || return 1    # built-in controller: usable by group itcb, not taken over
    expect 1-5 none default || return 1
    expect 1-6 none default || return 1
}
if [ "$(id -u)" -eq 0 ] && command -v udevadm >/dev/null && unshare --mount true 2>/dev/null; then
    check "udevadm test (offline): configured dongle → itcb 0660 + SYSTEMD_WANTS; others not started" udev_cases
else
    skip "udevadm test (offline) needs root and mount namespaces"
fi

# dpkg --root needs a dpkg database and the files the maintainer scripts touch
# (passwd, group, shadow, gshadow); --force-script-chrootless runs them on this
# system with DPKG_ROOT set, and our postinst/postrm work inside DPKG_ROOT.
dpkg_root() { dpkg --root="$root" --force-script-chrootless --force-not-root --force-depends "$@"; }
dpkg_root_install() {
    root="$scratch/root"
    mkdir -p "$root/etc" "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/log"
    : > "$root/var/lib/dpkg/status"
    printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
    printf 'root:x:0:\n' > "$root/etc/group"
    printf 'root:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
    printf 'root:*::\n' > "$root/etc/gshadow"
    chmod 0640 "$root/etc/shadow" "$root/etc/gshadow"
    dpkg_root -i "$deb" || return 1
    grep -q '^itcb:x:[0-9]*:$' "$root/etc/group" || { echo "no itcb group"; cat "$root/etc/group"; return 1; }
    local gid uid
    gid=$(awk -F: '$1 == "itcb" { print $3 }' "$root/etc/group")
    uid=$(awk -F: '$1 == "itcb" { print $3 }' "$root/etc/passwd")
    grep -qx "itcb:x:$uid:$gid:itcb-dongle appliance:/nonexistent:/usr/sbin/nologin" "$root/etc/passwd" \
        || { echo "itcb user:"; cat "$root/etc/passwd"; return 1; }
    [ "$uid" -lt 1000 ] && [ "$gid" -lt 1000 ] || { echo "not a system user/group: $uid/$gid"; return 1; }
    for f in usr/bin/itcb-dongle usr/lib/udev/rules.d/70-itcb-dongle.rules usr/lib/systemd/system/itcb-dongle@.service \
        etc/default/itcb-dongle etc/itcb-dongle/dongles usr/share/doc/itcb-dongle/copyright; do
        [ -f "$root/$f" ] || { echo "missing $f"; return 1; }
    done
    [ -x "$root/usr/bin/itcb-dongle" ] || return 1
    dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status} ${Conffiles}\n' itcb-dongle | tee "$scratch/status"
    grep -q '^install ok installed' "$scratch/status" && grep -q '/etc/default/itcb-dongle' "$scratch/status" || return 1
    # Reinstall: postinst again (configure with the old version), user kept as is.
    echo 'ITCB_NAME=Kiosk' >> "$root/etc/default/itcb-dongle"
    dpkg_root -i "$deb" || return 1
    [ "$(grep -c '^itcb:' "$root/etc/passwd")" = 1 ] && grep -q Kiosk "$root/etc/default/itcb-dongle" || return 1
    # Remove: files go, settings and the user stay.
    dpkg_root --remove itcb-dongle || return 1
    [ ! -e "$root/usr/bin/itcb-dongle" ] && [ ! -e "$root/usr/lib/udev/rules.d/70-itcb-dongle.rules" ] \
        && [ -e "$root/etc/default/itcb-dongle" ] && grep -q '^itcb:' "$root/etc/passwd" || { echo "remove"; return 1; }
    # Purge: settings (the per-dongle file README has one create too), user and group go.
    mkdir -p "$root/var/log/itcb-dongle"
    echo 'ITCB_NAME=Counter 2' > "$root/etc/itcb-dongle/1-1.2.conf"
    dpkg_root --purge itcb-dongle || return 1
    ! grep -q '^itcb:' "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow" \
        || { echo "user left behind"; return 1; }
    [ ! -e "$root/etc/default/itcb-dongle" ] && [ ! -e "$root/etc/itcb-dongle" ] && [ ! -e "$root/var/log/itcb-dongle" ] \
        || { echo "purge left files"; return 1; }
}
check "dpkg --root: install creates the itcb system user; files land; reinstall, remove, purge" dpkg_root_install

staged_install() {
    local dest="$scratch/staged" out
    DESTDIR="$dest" scripts/install.sh --binary "$binary" || return 1
    [ -x "$dest/usr/local/bin/itcb-dongle" ] || return 1
    grep -q 'IMPORT{program}="/usr/local/bin/itcb-dongle --udev-match /sys%p"' "$dest/etc/udev/rules.d/70-itcb-dongle.rules" \
        && grep -q '^ExecStart=/usr/local/bin/itcb-dongle --role' "$dest/etc/systemd/system/itcb-dongle@.service" \
        && cmp -s udev/itcb-dongle.default "$dest/etc/default/itcb-dongle" \
        && cmp -s udev/dongles "$dest/etc/itcb-dongle/dongles" \
        && [ -f "$dest/usr/local/share/doc/itcb-dongle/README.md" ] \
        && grep -q '^\.TH ITCB' "$dest/usr/local/share/man/man1/itcb-dongle.1" \
        && [ -s "$dest/usr/local/share/bash-completion/completions/itcb-dongle" ] \
        && [ -s "$dest/usr/local/share/zsh/site-functions/_itcb-dongle" ] || { find "$dest"; return 1; }
    [ "$(stat -c %a "$dest/etc/udev/rules.d/70-itcb-dongle.rules")" = 644 ] || return 1
    # The binary build-deb.sh built (what install.sh installs without --binary)
    # lands byte for byte as the package has it (both strip it the same way).
    if [ -x .build-embedded/itcb-dongle ] && [ -z "${ITCB_DEB:-}" ]; then
        DESTDIR="$scratch/same" scripts/install.sh --binary .build-embedded/itcb-dongle >/dev/null || return 1
        cmp "$scratch/same/usr/local/bin/itcb-dongle" "$binary" || { echo "install.sh and the package differ"; return 1; }
    fi
    ! grep -rq '/usr/bin/itcb-dongle' "$dest/etc" || { echo "a path still names /usr/bin"; return 1; }
    # The installed unit verifies too (its binary path rewritten into the stage).
    mkdir -p "$scratch/unit/staged"
    sed "s|/usr/local/bin/itcb-dongle|$dest/usr/local/bin/itcb-dongle|" "$dest/etc/systemd/system/itcb-dongle@.service" \
        > "$scratch/unit/staged/itcb-dongle@2-1.service"
    out=$(systemd-analyze verify --man=no "$scratch/unit/staged/itcb-dongle@2-1.service" 2>&1)
    [ -z "$out" ] || { echo "$out"; return 1; }
    # Again, with settings changed: they are kept, the shipped ones go next to them.
    echo "ITCB_NAME=Mine" > "$dest/etc/default/itcb-dongle"
    DESTDIR="$dest" scripts/install.sh --binary "$binary" >/dev/null || return 1
    grep -qx ITCB_NAME=Mine "$dest/etc/default/itcb-dongle" && cmp -s udev/itcb-dongle.default "$dest/etc/default/itcb-dongle.dist" \
        || { echo "settings overwritten"; return 1; }
    DESTDIR="$dest" scripts/install.sh --uninstall >/dev/null || return 1
    [ ! -e "$dest/usr/local/bin/itcb-dongle" ] && [ ! -e "$dest/etc/udev/rules.d/70-itcb-dongle.rules" ] \
        && [ ! -e "$dest/etc/systemd/system/itcb-dongle@.service" ] && [ ! -e "$dest/etc/default/itcb-dongle.dist" ] \
        && [ ! -e "$dest/usr/local/share/man/man1/itcb-dongle.1" ] \
        && [ ! -e "$dest/usr/local/share/bash-completion/completions/itcb-dongle" ] \
        && [ -e "$dest/etc/default/itcb-dongle" ] && [ -e "$dest/etc/itcb-dongle/dongles" ] || { find "$dest"; return 1; }
    echo 'ITCB_NAME=Counter 2' > "$dest/etc/itcb-dongle/1-1.2.conf"
    DESTDIR="$dest" scripts/install.sh --purge >/dev/null || return 1
    [ -z "$(find "$dest" -type f)" ] || { echo "left:"; find "$dest" -type f; return 1; }
    # Another PREFIX.
    DESTDIR="$dest" PREFIX=/opt/itcb scripts/install.sh --binary "$binary" >/dev/null || return 1
    [ -x "$dest/opt/itcb/bin/itcb-dongle" ] && grep -q '^ExecStart=/opt/itcb/bin/itcb-dongle ' "$dest/etc/systemd/system/itcb-dongle@.service"
}
check "install.sh (DESTDIR): stages binary, rule, unit, settings; keeps settings; uninstall, purge, PREFIX" staged_install

# install.sh as root for real, but in a private mount namespace whose /etc,
# /usr/local and /var/log are scratch copies: it creates the itcb user and
# group there (no systemd or udev running here, so nothing to reload).
live_install() {
    local live="$scratch/live" out
    mkdir -p "$live/etc" "$live/usr-local" "$live/var-log"
    cp -a /etc/. "$live/etc/" 2>/dev/null
    sed -i '/^itcb:/d' "$live/etc/passwd" "$live/etc/group" "$live/etc/shadow" "$live/etc/gshadow" 2>/dev/null
    out=$(unshare --mount --propagation private sh -c '
        set -e
        mount --bind "$1/etc" /etc
        mount --bind "$1/usr-local" /usr/local
        mount --bind "$1/var-log" /var/log
        scripts/install.sh --binary "$2"
        id itcb
        stat -c "%a %U:%G %n" /usr/local/bin/itcb-dongle /etc/udev/rules.d/70-itcb-dongle.rules \
            /etc/systemd/system/itcb-dongle@.service /etc/default/itcb-dongle
        scripts/install.sh --binary "$2" >/dev/null
        [ "$(grep -c "^itcb:" /etc/passwd)" = 1 ]
        scripts/install.sh --uninstall
        ! id itcb 2>/dev/null
        [ ! -e /usr/local/bin/itcb-dongle ] && [ ! -e /etc/udev/rules.d/70-itcb-dongle.rules ]
        [ -e /etc/default/itcb-dongle ]' sh "$live" "$binary" 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    grep -q '^uid=[0-9]*(itcb) gid=[0-9]*(itcb) groups=[0-9]*(itcb)$' <<< "$out" || return 1
    grep -q '^755 root:root /usr/local/bin/itcb-dongle$' <<< "$out" && grep -q '^644 root:root /etc/default/itcb-dongle$' <<< "$out"
}
if [ "$(id -u)" -eq 0 ] && unshare --mount true 2>/dev/null; then
    check "install.sh as root (private mount namespace): itcb user and group, files, uninstall removes them" live_install
else
    skip "install.sh as root needs root and mount namespaces"
fi

# The package on each supported Debian release in a debootstrapped root of its
# own (Debian 13's lintian refuses files under /lib, an alias of
# /usr/lib there): that release's lintian, install, dpkg -S, systemd-analyze
# and udevadm verify, a purge that warns about nothing and leaves nothing.
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null && unshare --mount true 2>/dev/null; then
    for suite in trixie bookworm; do
        check "Debian $([ $suite = trixie ] && echo 13 || echo 12) ($suite) root: its lintian clean, installs, verifies, purges clean" \
            Tests/Deployment/package-on-debian.sh "$suite" "$deb"
    done
else
    skip "the package on Debian 12 and 13 roots needs root and debootstrap"
fi

# itcb-dongle-setup pi-uart in arm64 roots of Debian 13 and 12 (debootstrap
# --foreign, cached), laid out as Raspberry Pi OS and as Debian's raspi image:
# files written, hciuart masked, the instance enabled, a second run changes
# nothing, --undo restores every file, bad input exits 2.
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null; then
    for suite in trixie bookworm; do
        check "Pi radio set-up in a Debian $([ $suite = trixie ] && echo 13 || echo 12) arm64 root: Raspberry Pi OS and raspi layouts, idempotent, --undo" \
            Tests/Deployment/pi-setup-roots.sh "$suite" "$deb"
    done
else
    skip "the Pi radio set-up in arm64 roots needs root and debootstrap"
fi

# The demo's set-up (scripts/setup.sh --demo) on a clean Debian 12 root that has
# only what README's Install asks for (debootstrap once, cached; see the script).
if [ "$(id -u)" -eq 0 ] && command -v debootstrap >/dev/null && [ -x /opt/swift/usr/bin/swift ]; then
    check "demo set-up on a clean Debian 12 root: only the demo's packages, python3-venv, a working .venv" \
        Tests/Deployment/demo-setup-clean-debian.sh
else
    skip "demo set-up on a clean Debian 12 root needs root, debootstrap and Swift at /opt/swift"
fi

finish
