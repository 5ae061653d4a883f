#!/usr/bin/env bash
# Builds out/itcb-dongle_<version>_<arch>.deb (version: the VERSION file) with
# dpkg-deb, no debhelper:
#   /usr/bin/itcb-dongle                       Embedded Swift build (scripts/build-embedded.sh):
#                                              libc, libm and libusb-1.0 only
#   /usr/sbin/itcb-dongle-setup                packaging/itcb-dongle-setup (the Pi's radio handed
#                                              over; man page itcb-dongle-setup.8 from its header)
#   /usr/lib/udev/rules.d/70-itcb-dongle.rules     udev/70-itcb-dongle.rules
#   /usr/lib/systemd/system/itcb-dongle@.service   udev/itcb-dongle@.service
#                                              (usr-merged paths: Debian 13's lintian refuses
#                                              /lib, an alias of /usr/lib there; 12 reads both)
#   /etc/default/itcb-dongle                   udev/itcb-dongle.default (conffile)
#   /etc/itcb-dongle/dongles                   udev/dongles (conffile)
#   /usr/share/doc/itcb-dongle/                README.md, copyright, changelog.gz
#   /usr/share/itcb-dongle/grafana/, prometheus/   monitoring/: the Grafana dashboard, the
#                                              Prometheus alert rules and their promtool tests
#   /usr/share/man/man1/itcb-dongle.1.gz       from the option table (as --help), at build
#   /usr/share/bash-completion/completions/itcb-dongle   time by itcb-dongle-docs
#   /usr/share/zsh/vendor-completions/_itcb-dongle        (make docs)
# (the file list: `make install`, as scripts/install.sh)
#   DEBIAN/ postinst (creates the itcb system user and group, reloads udev),
#           prerm (stops running instances), postrm (purge: removes the user, and
#           runs itcb-dongle-setup --undo from a copy of the script put in it here)
#
# Usage: scripts/build-deb.sh                  build the binary (below), then package it
#        scripts/build-deb.sh --arch arm64     the same for Debian arm64 (Raspberry Pi kiosks):
#                                              cross-built (scripts/build-embedded.sh --arch
#                                              arm64, into .build-embedded-arm64), and run in
#                                              qemu-aarch64-static for its version
#        scripts/build-deb.sh --binary PATH    package a binary built before (by this
#                                              script, or scripts/build-embedded.sh)
#        scripts/build-deb.sh --build-only     only build; prints the binary's path
#                                              (scripts/install.sh installs that one)
# It says what it does on stderr; the last line on stdout is
# "build-deb: built out/itcb-dongle_<version>_<arch>.deb".
# The packaged binary is stripped (scripts/install.sh strips the same way).
# Needs: swift, dpkg-dev (dpkg-shlibdeps), binutils, and for arm64 the cross
# packages: checked first (scripts/deb-tools.sh), the missing ones named in one
# line; `scripts/setup.sh --package amd64|arm64` installs them. Set
# SOURCE_DATE_EPOCH for a reproducible package (default: the last commit's time).
#
# Linking: the binary is Embedded Swift: what it uses of the Swift
# stdlib is compiled into it, so it needs only glibc (libc, libm) and
# libusb-1.0 at run time: Depends: libc6, libusb-1.0-0. It builds into the same
# build directory as the tests (.build-embedded; ITCB_DEB_SCRATCH=DIR for another), so
# what they tested is what is packaged (.build-embedded-arm64 for arm64, which
# the arm64 suite of scripts/test.sh runs in user-mode QEMU).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d ' \n' < VERSION)
arch=$(dpkg --print-architecture)
binary=""
build_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch=$2; shift ;;
        --binary) binary=$2; shift ;;
        --build-only) build_only=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-deb: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
case "$arch" in
    amd64|x86_64) arch=amd64; scratch=${ITCB_DEB_SCRATCH:-.build-embedded}; run=(); strip=strip ;;
    arm64|aarch64) arch=arm64; scratch=${ITCB_DEB_SCRATCH:-.build-embedded-arm64}; run=(qemu-aarch64-static)
        strip=aarch64-linux-gnu-strip ;;
    *) echo "build-deb: unknown --arch $arch (amd64 or arm64)" >&2; exit 2 ;;
esac
# Every tool first: a missing one is named here, not found out halfway (exit 127, clang's missing header).
scripts/deb-tools.sh --check "$arch" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build() {
    echo "build-deb: building the shipped binary (scripts/build-embedded.sh: Embedded Swift, -Osize;" \
        "2 to 5 minutes from scratch, nothing when no source changed)" >&2
    local built
    built=$(scripts/build-embedded.sh --arch "$arch" --out "$scratch") || { echo "build-deb: scripts/build-embedded.sh failed" >&2; exit 1; }
    echo "$built"
}

if [ -z "$binary" ]; then binary=$(build); fi
[ -x "$binary" ] || { echo "build-deb: no binary at $binary" >&2; exit 1; }
# Shared libraries it may need: glibc's and libusb's, nothing else (no libswift*.so).
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
unexpected=$(echo "$needed" | grep -Ev '^(libusb-1\.0\.so\.0|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux.*\.so\.[0-9])$' || true)
if [ -n "$unexpected" ]; then
    echo "build-deb: $binary needs shared libraries beyond glibc and libusb: $(echo $unexpected)" >&2
    echo "build-deb: (libswift*, libstdc++: not the Embedded Swift build of scripts/build-embedded.sh)" >&2
    exit 1
fi
# The version the binary reports is the one the package is named after.
reported=$("${run[@]}" "$binary" --version)
[ "$reported" = "$version" ] || {
    echo "build-deb: $binary --version says '$reported', VERSION says '$version' (Sources/ITCBDongle/CommandLine/Version.swift)" >&2
    exit 1
}
if [ "$build_only" = 1 ]; then echo "$binary"; exit 0; fi
echo "build-deb: packaging $binary as itcb-dongle $version ($arch): man page, completion, udev rule, unit" >&2

epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
package="$work/itcb-dongle"
doc="$package/usr/share/doc/itcb-dongle"
# The file list is the Makefile's install target (scripts/install.sh's too), with Debian's places.
install -d "$package/DEBIAN"
SOURCE_DATE_EPOCH=$epoch make --no-print-directory install ARCH="$arch" OUT="$scratch" BINARY="$binary" \
    DESTDIR="$package" PREFIX=/usr UDEV_RULES_DIR=/usr/lib/udev/rules.d SYSTEMD_UNIT_DIR=/usr/lib/systemd/system \
    ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions >&2
gzip -9n "$package/usr/share/man/man1/itcb-dongle.1" "$package/usr/share/man/man8/itcb-dongle-setup.8"
install -m 0644 packaging/debian/copyright "$doc/"
cat > "$work/changelog" <<CHANGELOG
itcb-dongle ($version) unstable; urgency=medium

  * Release $version: peripheral and central 8-Ball roles over USB (libusb),
    H4 over TCP and serial; udev/systemd appliance deployment.

 -- itcb-dongle developers <maintainers@itcb-dongle.org>  $(LC_ALL=C date -R -u -d @"$epoch")
CHANGELOG
gzip -9n -c "$work/changelog" > "$doc/changelog.gz"
install -m 0755 packaging/debian/postinst packaging/debian/prerm "$package/DEBIAN/"
# postrm's purge runs itcb-dongle-setup --undo from its own copy (the installed one is
# removed before purge): the packaged script's text in place of the marker line.
sed -e "/^#itcb-dongle-setup#\$/{r $package/usr/sbin/itcb-dongle-setup" -e 'd}' packaging/debian/postrm > "$package/DEBIAN/postrm"
chmod 0755 "$package/DEBIAN/postrm"
grep -q '^ITCB_DONGLE_SETUP$' "$package/DEBIAN/postrm" && ! grep -q '^#itcb-dongle-setup#$' "$package/DEBIAN/postrm" \
    || { echo "build-deb: postrm: itcb-dongle-setup not put in place" >&2; exit 1; }
printf '/etc/default/itcb-dongle\n/etc/itcb-dongle/dongles\n' > "$package/DEBIAN/conffiles"

# Depends from what the binary links, with minimum versions (dpkg-shlibdeps);
# nothing but libc6 and libusb-1.0-0 may come out.
install -d "$work/shlibs/debian"
printf 'Source: itcb-dongle\n\nPackage: itcb-dongle\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$package/usr/bin/itcb-dongle" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
names=$(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/ //g' | sort | tr '\n' ' ')
[ "$names" = "libc6 libusb-1.0-0 " ] || { echo "build-deb: unexpected Depends: $depends" >&2; exit 1; }
# Packed relative relocations (the Makefile's -z pack-relative-relocs) need glibc
# 2.36's GLIBC_ABI_DT_RELR, a version dpkg-shlibdeps does not map to a minimum.
if readelf -V "$package/usr/bin/itcb-dongle" | grep -q 'Name: GLIBC_ABI_DT_RELR'; then
    depends=$(echo "$depends" | sed -E 's/libc6 \(>= [0-9.]+\)/libc6 (>= 2.36)/')
fi

size=$(du -sk --exclude=DEBIAN "$package" | cut -f1)
cat > "$package/DEBIAN/control" <<CONTROL
Package: itcb-dongle
Version: $version
Architecture: $arch
Maintainer: itcb-dongle developers <maintainers@itcb-dongle.org>
Installed-Size: $size
Depends: $depends
Section: misc
Priority: optional
Description: Magic 8-Ball BLE appliance on a USB Bluetooth dongle
 itcb-dongle drives a USB Bluetooth controller directly over libusb with its
 own BLE host stack and plays the Magic 8-Ball game of the ITCB sample apps,
 as the peripheral (answers questions) or the central (asks them).
 .
 For kiosks: udev starts one hardened systemd service per configured dongle
 (listed in /etc/itcb-dongle/dongles) when it is plugged in and the service
 ends when it is pulled. Options live in /etc/default/itcb-dongle.
CONTROL
(cd "$package" && find . -type f ! -path './DEBIAN/*' -printf '%P\n' | LC_ALL=C sort | xargs md5sum > DEBIAN/md5sums)
chmod 0644 "$package/DEBIAN/md5sums" "$package/DEBIAN/conffiles" "$package/DEBIAN/control"
find "$package" -exec touch -h -d @"$epoch" {} +
mkdir -p out
deb="out/itcb-dongle_${version}_${arch}.deb"
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$package" "$deb" >/dev/null
echo "build-deb: built $deb"
