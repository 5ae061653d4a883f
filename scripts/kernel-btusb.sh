#!/usr/bin/env bash
# Debian 13's own btusb.ko: the USB ids users' kernels hand to btusb, read by
# Tests/CLI/test_kernel_table.py against our chipset table (docs/DONGLES.md).
# Fetches the newest linux-image-6.12.*-amd64 package of trixie (component main)
# with a private sources list (the system's is not touched), keeps only
# btusb.ko (compressed as shipped) and the package's name under .cache/ (never
# committed; nothing of the table is copied into the repository). Idempotent:
# prints the module's path.
# Usage: scripts/kernel-btusb.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${ITCB_KERNEL_CACHE:-$PWD/.cache/kernel-btusb}"
mkdir -p "$cache"
# Suites running side by side (scripts/test.sh) fetch the package once: one at a time.
exec 9>"$cache/.lock"
flock 9
found() { ls "$cache"/lib/modules/*/kernel/drivers/bluetooth/btusb.ko* 2>/dev/null | head -1; }
if [ -s "$cache/package" ] && [ -n "$(found)" ]; then found; exit 0; fi
dir="$cache/apt"
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
cat > "$dir/main.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
opts=(-o Dir::Etc::sourcelist="$dir/main.sources" -o Dir::Etc::sourceparts=/dev/null
      -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Sandbox::User=root)
apt-get "${opts[@]}" update >&2
# The signed image Debian installs (linux-image-amd64 depends on it), e.g. linux-image-6.12.48+deb13-amd64.
package=$(apt-cache "${opts[@]}" search --names-only '^linux-image-6\.12\.[0-9]+\+deb13-amd64$' | awk '{print $1}' | sort -V | tail -1)
[ -n "$package" ] || { echo "kernel-btusb: no linux-image-6.12.N+deb13-amd64 in trixie" >&2; exit 1; }
echo "kernel-btusb: fetching $package" >&2
rm -f "$dir"/*.deb
(cd "$dir" && apt-get "${opts[@]}" download "$package" >&2)
deb=$(ls "$dir"/linux-image-*.deb | head -1)
rm -rf "$cache/lib"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache" --wildcards --transform 's|^\./usr/lib/|./lib/|' \
    './usr/lib/modules/*/kernel/drivers/bluetooth/btusb.ko*' 2>/dev/null \
  || dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache" --wildcards './lib/modules/*/kernel/drivers/bluetooth/btusb.ko*'
rm -f "$deb"
[ -n "$(found)" ] || { echo "kernel-btusb: $package holds no btusb.ko" >&2; exit 1; }
echo "$package" > "$cache/package"
found
