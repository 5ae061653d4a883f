#!/usr/bin/env bash
# Builds out/itcb-dongle_<version>_<arch>.deb: the binary with the Swift runtime
# linked statically (at run time it needs only libusb-1.0 and the C/C++ runtime every Debian has), the udev
# rule, the systemd unit, /etc/default/itcb-dongle, /etc/itcb-dongle/dongles,
# and maintainer scripts that create and remove the "itcb" user.
# Usage: scripts/build-deb.sh [--binary PATH]   (default: build it now)
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(cat VERSION)
arch=$(dpkg --print-architecture)
binary=""
if [ "${1:-}" = "--binary" ]; then binary=$2; fi
if [ -z "$binary" ]; then
    swift build -c release --static-swift-stdlib --product itcb-dongle --scratch-path .build-release 2>&1 | grep -Ev '^\[|^Building|^Compiling|^Write|^Linking' || true
    binary=.build-release/release/itcb-dongle
fi
[ -x "$binary" ] || { echo "build-deb: no binary at $binary"; exit 1; }
if ldd "$binary" | grep -q libswift; then echo "build-deb: $binary links Swift shared libraries"; exit 1; fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
package="$root/itcb-dongle"
install -d "$package/DEBIAN" "$package/usr/bin" "$package/lib/udev/rules.d" "$package/lib/systemd/system" \
    "$package/etc/default" "$package/etc/itcb-dongle" "$package/usr/share/doc/itcb-dongle" \
    "$package/usr/share/lintian/overrides"
install -m 0755 "$binary" "$package/usr/bin/itcb-dongle"
strip --strip-unneeded "$package/usr/bin/itcb-dongle"
install -m 0644 udev/70-itcb-dongle.rules "$package/lib/udev/rules.d/70-itcb-dongle.rules"
install -m 0644 udev/itcb-dongle@.service "$package/lib/systemd/system/itcb-dongle@.service"
install -m 0644 udev/itcb-dongle.default "$package/etc/default/itcb-dongle"
install -m 0644 udev/dongles "$package/etc/itcb-dongle/dongles"
install -m 0644 packaging/debian/copyright README.md "$package/usr/share/doc/itcb-dongle/"
install -m 0644 packaging/debian/lintian-overrides "$package/usr/share/lintian/overrides/itcb-dongle"
cat > "$root/changelog" <<CHANGELOG
itcb-dongle ($version) unstable; urgency=medium

  * Release $version: peripheral and central 8-Ball roles over USB (libusb),
    H4 over TCP and serial; udev/systemd deployment.

 -- itcb-dongle developers <maintainers@itcb-dongle.org>  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
CHANGELOG
gzip -9n -c "$root/changelog" > "$package/usr/share/doc/itcb-dongle/changelog.gz"
install -m 0755 packaging/debian/postinst packaging/debian/postrm "$package/DEBIAN/"
printf '/etc/default/itcb-dongle\n/etc/itcb-dongle/dongles\n' > "$package/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$package" | cut -f1)
cat > "$package/DEBIAN/control" <<CONTROL
Package: itcb-dongle
Version: $version
Architecture: $arch
Maintainer: itcb-dongle developers <maintainers@itcb-dongle.org>
Installed-Size: $size
Depends: libc6, libgcc-s1, libstdc++6, libusb-1.0-0
Section: misc
Priority: optional
Homepage: https://github.com/itcb-dongle/itcb-dongle
Description: Magic 8-Ball BLE appliance on a USB Bluetooth dongle
 itcb-dongle drives a USB Bluetooth controller directly over libusb with its
 own BLE host stack and plays the Magic 8-Ball game of the ITCB sample apps,
 as the peripheral (answers questions) or the central (asks them). udev starts
 one systemd service per configured dongle when it is plugged in.
CONTROL
(cd "$package" && find . -type f ! -path './DEBIAN/*' -printf '%P\n' | sort | xargs md5sum > DEBIAN/md5sums)
mkdir -p out
deb="out/itcb-dongle_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$package" "$deb" >/dev/null
echo "build-deb: $deb"
