#!/usr/bin/env bash
# The real Realtek, Intel, Broadcom and MediaTek firmware files for the vendor
# suites, from Debian's firmware-realtek, firmware-iwlwifi and bluez-firmware
# packages (Debian 12) and firmware-mediatek (Debian 13: the MT7922 and MT7925
# files are newer than Debian 12's firmware-misc-nonfree), component
# non-free-firmware, fetched with private sources lists (the system's is not
# touched) and extracted under .cache/ (never committed). Idempotent: prints the
# firmware directory (the one holding rtl_bt/, intel/, brcm/ and mediatek/).
# Usage: scripts/firmware-files.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${ITCB_FIRMWARE_CACHE:-$PWD/.cache/firmware-debian}"
mkdir -p "$cache"
# Suites running side by side (scripts/test.sh) fetch the files once: one at a time.
exec 9>"$cache/.lock"
flock 9
if [ -s "$cache/lib/firmware/rtl_bt/rtl8761bu_fw.bin" ] && [ -s "$cache/lib/firmware/intel/ibt-0041-0041.sfi" ] \
    && [ -s "$cache/lib/firmware/brcm/BCM43430A1.hcd" ] \
    && [ -s "$cache/lib/firmware/mediatek/mt7925/BT_RAM_CODE_MT7925_1_1_hdr.bin" ]; then
    echo "$cache/lib/firmware"; exit 0
fi
apt_dir="$cache/apt"
fetch() {  # fetch SUITE PACKAGE...: each package's .deb from SUITE, extracted into the cache
    local suite=$1; shift
    local dir="$apt_dir/$suite"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    cat > "$dir/nf.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: $suite
Components: non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    local opts=(-o Dir::Etc::sourcelist="$dir/nf.sources" -o Dir::Etc::sourceparts=/dev/null
                -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Sandbox::User=root)
    local updated="" package deb
    for package in "$@"; do
        deb=$(ls "$dir"/${package}_*_all.deb "$apt_dir"/${package}_*_all.deb 2>/dev/null | head -1 || true)
        if [ -z "$deb" ]; then
            [ -n "$updated" ] || { apt-get "${opts[@]}" update >&2; updated=1; }
            (cd "$dir" && apt-get "${opts[@]}" download "$package" >&2)
            deb=$(ls "$dir"/${package}_*_all.deb | head -1)
        fi
        dpkg-deb -x "$deb" "$cache"
    done
}
mkdir -p "$apt_dir"
fetch bookworm firmware-realtek firmware-iwlwifi bluez-firmware
fetch trixie firmware-mediatek
# Debian 13 installs under /usr/lib/firmware: the Bluetooth files join the others.
mkdir -p "$cache/lib/firmware/mediatek/mt7925"
cp "$cache"/usr/lib/firmware/mediatek/BT_RAM_CODE_* "$cache/lib/firmware/mediatek/"
cp "$cache"/usr/lib/firmware/mediatek/mt7925/BT_RAM_CODE_* "$cache/lib/firmware/mediatek/mt7925/"
test -s "$cache/lib/firmware/rtl_bt/rtl8761bu_fw.bin"
test -s "$cache/lib/firmware/intel/ibt-0041-0041.sfi"
test -s "$cache/lib/firmware/brcm/BCM43430A1.hcd"
test -s "$cache/lib/firmware/mediatek/mt7925/BT_RAM_CODE_MT7925_1_1_hdr.bin"
echo "$cache/lib/firmware"
