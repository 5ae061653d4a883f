#!/usr/bin/env bash
# The real Realtek, Intel and Broadcom firmware files for the Realtek, Intel and
# Broadcom suites, from Debian's firmware-realtek, firmware-iwlwifi and
# bluez-firmware packages (component non-free-firmware), fetched with a private
# sources list (the system's is not touched) and extracted under .cache/ (never
# committed). Idempotent: prints the firmware directory (the one holding rtl_bt/,
# intel/ and brcm/).
# Usage: scripts/firmware-files.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${ITCB_FIRMWARE_CACHE:-$PWD/.cache/firmware-debian}"
mkdir -p "$cache"
# Suites running side by side (scripts/test.sh) fetch the files once: one at a time.
exec 9>"$cache/.lock"
flock 9
if [ -s "$cache/lib/firmware/rtl_bt/rtl8761bu_fw.bin" ] && [ -s "$cache/lib/firmware/intel/ibt-0041-0041.sfi" ] \
    && [ -s "$cache/lib/firmware/brcm/BCM43430A1.hcd" ]; then
    echo "$cache/lib/firmware"; exit 0
fi
apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
cat > "$apt_dir/nf.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
opts=(-o Dir::Etc::sourcelist="$apt_dir/nf.sources" -o Dir::Etc::sourceparts=/dev/null
      -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" -o APT::Sandbox::User=root)
updated=""
for package in firmware-realtek firmware-iwlwifi bluez-firmware; do
    deb=$(ls "$apt_dir"/${package}_*_all.deb 2>/dev/null | head -1 || true)
    if [ -z "$deb" ]; then
        [ -n "$updated" ] || { apt-get "${opts[@]}" update >&2; updated=1; }
        (cd "$apt_dir" && apt-get "${opts[@]}" download "$package" >&2)
        deb=$(ls "$apt_dir"/${package}_*_all.deb | head -1)
    fi
    dpkg-deb -x "$deb" "$cache"
done
test -s "$cache/lib/firmware/rtl_bt/rtl8761bu_fw.bin"
test -s "$cache/lib/firmware/intel/ibt-0041-0041.sfi"
test -s "$cache/lib/firmware/brcm/BCM43430A1.hcd"
echo "$cache/lib/firmware"
