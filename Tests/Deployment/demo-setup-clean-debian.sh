#!/usr/bin/env bash
# Proves the demo's install step (scripts/setup.sh --demo, what scripts/demo.sh
# runs first) on a clean Debian 12 that has only what README's "Install" asks
# for: debootstrap --variant=minbase bookworm, plus the Debian 12 packages
# swift.org's tarball guide lists for the toolchain and python3 (in every
# standard Debian 12 install, without python3-venv), with the Swift toolchain
# of this machine bind-mounted at /opt/swift (read-only). The clean root is made
# once and cached ($ITCB_CACHE, default ~/.cache/itcb-dongle/bookworm-clean);
# each run works on an overlay over it, so the cached root stays clean.
#
# Checks: setup --demo exits 0; `python3 -m venv` works afterwards (it does not
# on stock Debian 12: python3-venv); .venv imports bumble; pkg-config finds
# libusb-1.0; the Debian packages it added are the demo's (libusb's dev
# package, pkg-config, make, python3-venv and what they pull in) and none of the test
# set-up's (ARM toolchain, QEMU, valgrind, tshark, BlueZ, debootstrap, strace).
# Needs root, debootstrap, the Debian mirror and PyPI. About 4 minutes the
# first time (debootstrap), about 1 minute after.
# ITCB_DEMO_CHECK_KEEP=1 keeps the overlay (path printed) for a look inside;
# ITCB_DEMO_FULL=1 also runs the whole demo there (build included, below).
# --prepare: only make the cached clean root (scripts/test.sh does it early).
set -euo pipefail
prepare=0
if [ "${1:-}" = --prepare ]; then prepare=1; fi
cd "$(dirname "$0")/../.."
repo=$PWD
cache=${ITCB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/itcb-dongle}
base=$cache/bookworm-clean
swift_root=${ITCB_SWIFT_ROOT:-/opt/swift}
# swift.org, "Linux installation via tarball", Debian 12.
swift_packages=(binutils-gold gcc git libcurl4-openssl-dev libedit-dev libicu-dev libncurses-dev libpython3-dev
    libsqlite3-dev libxml2-dev pkg-config tzdata uuid-dev python3)
name=demo-setup-clean-debian
. Tests/Deployment/debian-root.sh
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || fail "needs debootstrap (scripts/setup.sh installs it)"
[ -x "$swift_root/usr/bin/swift" ] || fail "no Swift toolchain at $swift_root (ITCB_SWIFT_ROOT)"

# This machine's network, not the product's requirements: the CA bundle pip
# trusts here (an egress proxy may re-sign TLS), copied into the root; and the
# Swift toolchain, read-only at /opt/swift.
host_ca=${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
[ -f "$host_ca" ] && root_env=(PIP_CERT=/etc/host-ca.crt SSL_CERT_FILE=/etc/host-ca.crt REQUESTS_CA_BUNDLE=/etc/host-ca.crt)
root_path=/opt/swift/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount_extra() {
    mkdir -p "$1/opt/swift"
    mount --bind "$swift_root" "$1/opt/swift" && mount -o remount,bind,ro "$1/opt/swift" \
        && mounts=("$1/opt/swift" "${mounts[@]}")
    if [ -f "$host_ca" ]; then cp -L "$host_ca" "$1/etc/host-ca.crt"; fi
}

mkdir -p "$cache"
exec 9>"$base.lock"
flock 9
cached_root bookworm "$base" "${swift_packages[*]}"
exec 9>&-
((!prepare)) || exit 0

# A throw-away overlay over the clean root, with this checkout (its tracked
# files as they are in the work tree) at /root/itcb-dongle.
keep=${ITCB_DEMO_CHECK_KEEP:-0}
overlay_root "$base"
mkdir -p "$root/root/itcb-dongle"
git -C "$repo" ls-files -z --cached --others --exclude-standard | tar -C "$repo" --null -T - -cf - \
    | tar -C "$root/root/itcb-dongle" -xf -

in_root "$root" 'dpkg-query -W -f="\${Package}\n" | sort' > "$work/before"
in_root "$root" 'python3 -m venv /tmp/venv-before' > "$work/venv-before.log" 2>&1 && venv_before=works || venv_before=fails
echo "demo-setup-clean-debian: before: $(wc -l < "$work/before") packages, python3 -m venv $venv_before:" \
    "$(tr -s '\n' ' ' < "$work/venv-before.log" | grep -o 'ensurepip is not available' || tail -n 1 "$work/venv-before.log")"
status=0
in_root "$root" 'cd /root/itcb-dongle && scripts/setup.sh --demo' 2>&1 | sed 's/^/  | /' || status=$?
[ "${PIPESTATUS[0]}" = 0 ] && [ "$status" = 0 ] || fail "scripts/setup.sh --demo failed in the clean root"
in_root "$root" 'dpkg-query -W -f="\${Package}\n" | sort' > "$work/after"
added=$(comm -13 "$work/before" "$work/after" | tr '\n' ' ')
echo "demo-setup-clean-debian: packages added: $added"
for unwanted in gcc-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm valgrind tshark bluez debootstrap strace; do
    ! grep -qx "$unwanted" "$work/after" || fail "the demo's set-up installed $unwanted (the tests' set-up)"
done
for wanted in libusb-1.0-0-dev pkg-config make; do
    grep -qx "$wanted" "$work/after" || fail "$wanted is not installed after the demo's set-up"
done
if [ "$venv_before" = fails ]; then
    tr -s '\n' ' ' < "$work/venv-before.log" | grep -q 'ensurepip is not available' \
        || fail "python3 -m venv failed for another reason than stock Debian's: $(cat "$work/venv-before.log")"
    grep -qx python3-venv "$work/after" || fail "python3 -m venv failed before and python3-venv was not installed"
fi
in_root "$root" 'python3 -m venv /tmp/venv-after' > /dev/null || fail "python3 -m venv still fails"
in_root "$root" 'cd /root/itcb-dongle && .venv/bin/python -c "import bumble" && pkg-config --exists libusb-1.0' \
    || fail ".venv without bumble, or pkg-config cannot find libusb-1.0"
in_root "$root" 'swift --version' > /dev/null 2>&1 || fail "swift does not run in the clean root (its packages: ${swift_packages[*]})"
echo "demo-setup-clean-debian: ok (venv before: $venv_before; after: works; bumble and libusb-1.0 found)"

# ITCB_DEMO_FULL=1: then the whole demo in that root (a debug build from scratch:
# minutes on 2 cores, niced). The package has no dependencies (the
# command line is parsed by its own code), so the build needs no network.
if [ "${ITCB_DEMO_FULL:-0}" = 1 ]; then
    in_root "$root" 'cd /root/itcb-dongle && nice scripts/demo.sh' > "$work/demo.log" 2>&1 || true
    sed 's/^/  | /' "$work/demo.log"
    answers=$(grep -c '^[^ ].* -> ' "$work/demo.log" || true)
    [ "$answers" = 3 ] || fail "the demo in the clean root printed $answers answers, not 3"
    echo "demo-setup-clean-debian: the whole demo ran in the clean root: 3 answers"
fi
