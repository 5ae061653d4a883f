#!/usr/bin/env bash
# Prepares the USB fixture: Debian packages (QEMU, busybox, kmod, usbutils, udev,
# libusb), Debian 12's 6.1 and Debian 13's 6.12 kernels with dummy_hcd/gadgetfs/btusb/9p
# modules, and for each an initramfs whose init (initrd-init) mounts the host's /usr read-only and the work
# folder over 9p and runs the work folder's guest.sh (see run-guest.sh).
# Everything lands in .cache/usb-fixture (6.1) and .cache/usb-fixture-6.12 and is reused
# while it is complete.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=.cache/usb-fixture
mkdir -p "$cache"
# Concurrent runs (several suites, several engineers) share the cache: one at a time.
exec 9>"$cache/.lock"
flock 9
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

missing=()
for p in qemu-system-x86 busybox-static cpio kmod xz-utils usbutils udev libusb-1.0-0; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "usb-fixture: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# kernel SERIES CACHE: a Debian kernel of that series with the modules below, and an
# initramfs for it, in CACHE. 6.1 is Debian 12's (the system's apt); 6.12 is Debian
# 13's, from trixie's archive through a private apt state (the system's sources are
# not touched): the MediaTek references (Tests/USBFixture/test_mediatek.py) need
# its btmtk, the MT7925 among its ids.
kernel() {
    local series=$1 cache=$2 pattern package wanted_modules=$wanted
    # fscache is part of netfs from 6.12 on
    [ "$series" = 6.1 ] || wanted_modules=${wanted_modules/ fscache/}
    mkdir -p "$cache"
    if [ ! -e "$cache/kernel.ok" ]; then
        local opts=()
        if [ "$series" = 6.1 ]; then
            pattern='^linux-image-6\.1\.0-[0-9]+-amd64$'
            # as root, apt's _apt user could not write into the cache (and apt says so): download as root
            [ -n "$sudo" ] || opts=(-o APT::Sandbox::User=root)
            package=$(apt-cache search --names-only "$pattern" | awk '{print $1}' | sort -V | tail -1)
            if [ -z "$package" ]; then $sudo apt-get update -qq; package=$(apt-cache search --names-only "$pattern" | awk '{print $1}' | sort -V | tail -1); fi
        else
            pattern='^linux-image-6\.12\.[0-9]+\+deb13-amd64$'
            local dir="$PWD/$cache/apt"  # absolute: apt reads relative Dir:: paths from /
            mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$dir/main.sources"
            opts=(-o Dir::Etc::sourcelist="$dir/main.sources" -o Dir::Etc::sourceparts=/dev/null
                  -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Sandbox::User=root)
            apt-get "${opts[@]}" update -qq
            package=$(apt-cache "${opts[@]}" search --names-only "$pattern" | awk '{print $1}' | sort -V | tail -1)
        fi
        [ -n "$package" ] || { echo "usb-fixture: no Debian $series kernel ($pattern) in apt"; exit 1; }
        echo "usb-fixture: fetching $package"
        rm -rf "$cache/kpkg" "$cache"/*.deb
        (cd "$cache" && apt-get "${opts[@]}" download "$package" >/dev/null)
        dpkg-deb -x "$cache"/linux-image-*.deb "$cache/kpkg"
        rm -f "$cache"/*.deb
        touch "$cache/kernel.ok"
    fi
    local kdir kversion
    kdir="$cache/kpkg/lib/modules"
    [ -d "$kdir" ] || kdir="$cache/kpkg/usr/lib/modules"  # merged /usr (Debian 13)
    kversion=$(ls "$kdir")
    ln -sf "kpkg/boot/vmlinuz-$kversion" "$cache/vmlinuz"
    # A module the kernel has built in (virtio, the console, ecc, fscache in 6.12) is no file.
    builtin() { grep -q "/$1\.ko$" "$kdir/$kversion/modules.builtin"; }

    # Rebuilt when this script or the init is newer, or when the cached one lacks a
    # module this script wants (another checkout's older setup.sh may have built it).
    local lacking=0 present m
    if [ -e "$cache/initrd.img" ]; then
        present=$(zcat "$cache/initrd.img" | cpio -t --quiet 2>/dev/null | sed -n 's|.*/\([^/]*\)\.ko[^/]*$|\1|p')
        for m in $wanted_modules; do grep -qx -- "$m" <<< "$present" || builtin "$m" || lacking=1; done
    fi
    if [ ! -e "$cache/initrd.img" ] || [ Tests/USBFixture/setup.sh -nt "$cache/initrd.img" ] \
        || [ Tests/USBFixture/initrd-init -nt "$cache/initrd.img" ] || ((lacking)); then
        local root modules moddir file dest
        root=$(mktemp -d)
        mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,usr,mnt/work,etc,lib/modules}
        cp /bin/busybox "$root/bin/busybox"
        # The host's /usr is the guest's: its loader and libraries must be found where Debian looks.
        ln -s usr/lib64 "$root/lib64"
        ln -s /usr/lib/x86_64-linux-gnu "$root/lib/x86_64-linux-gnu"
        read -r -a modules <<< "$(echo $wanted_modules)"
        moddir="$kdir/$kversion"
        for m in "${modules[@]}"; do
            file=$(find "$moddir/kernel" -name "$m.ko*" | head -1)
            if [ -z "$file" ]; then builtin "$m" && continue; echo "usb-fixture: module $m not found in $kversion"; exit 1; fi
            dest="$root/lib/modules/$kversion/${file#"$moddir"/}"
            mkdir -p "$(dirname "$dest")"
            # Debian 13 ships them xz-compressed; busybox's modprobe loads plain ones.
            case "$file" in *.xz) xz -dc "$file" > "${dest%.xz}" ;; *) cp "$file" "$dest" ;; esac
        done
        cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kversion/" 2>/dev/null || true
        depmod -b "$root" "$kversion"
        install -m 0755 Tests/USBFixture/initrd-init "$root/init"
        chmod 0755 "$root"  # mktemp -d made it 0700: every other user would be locked out of /
        # Written aside and renamed: a guest booting meanwhile reads the old or the new one, never half of one.
        (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$cache/initrd.img.new"
        mv "$cache/initrd.img.new" "$cache/initrd.img"
        rm -rf "$root"
    fi
    echo "usb-fixture: ready (kernel $kversion)"
}

wanted="ecc ecdh_generic bluetooth rfkill btbcm btintel btmtk btrtl btusb virtio virtio_ring virtio_pci
    virtio_pci_legacy_dev virtio_pci_modern_dev virtio_console usb-common usbcore udc-core dummy_hcd
    gadgetfs libcomposite configfs usb_f_fs usbmon 9pnet 9pnet_virtio 9p netfs fscache crc16"
kernel 6.1 "$cache"
kernel 6.12 "$cache-6.12"
