#!/usr/bin/env bash
# Prepares the USB fixture: Debian packages (QEMU, busybox, kmod, usbutils, udev,
# libusb), a Debian 6.1 kernel with dummy_hcd/gadgetfs/btusb/9p modules, and an
# initramfs whose init (initrd-init) mounts the host's /usr read-only and the work
# folder over 9p and runs the work folder's guest.sh (see run-guest.sh).
# Everything lands in .cache/usb-fixture and is reused while it is complete.
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
for p in qemu-system-x86 busybox-static cpio kmod usbutils udev libusb-1.0-0; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "usb-fixture: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -e "$cache/kernel.ok" ]; then
    package=$(apt-cache search --names-only 'linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{print $1}' | sort -t- -k4,4n | tail -1)
    if [ -z "$package" ]; then $sudo apt-get update -qq; package=$(apt-cache search --names-only 'linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{print $1}' | sort -t- -k4,4n | tail -1); fi
    [ -n "$package" ] || { echo "usb-fixture: no linux-image-6.1.0-N-amd64 in apt"; exit 1; }
    echo "usb-fixture: fetching $package"
    rm -rf "$cache/kpkg" "$cache"/*.deb
    sandbox=()  # as root, apt's _apt user could not write into the cache (and apt says so): download as root
    [ -n "$sudo" ] || sandbox=(-o APT::Sandbox::User=root)
    (cd "$cache" && apt-get download "${sandbox[@]}" "$package" >/dev/null)
    dpkg-deb -x "$cache"/linux-image-*.deb "$cache/kpkg"
    touch "$cache/kernel.ok"
fi
kversion=$(ls "$cache/kpkg/lib/modules")
ln -sf "kpkg/boot/vmlinuz-$kversion" "$cache/vmlinuz"

# Rebuilt when this script or the init is newer, or when the cached one lacks a
# module this script wants (another checkout's older setup.sh may have built it).
wanted_modules="ecc ecdh_generic bluetooth rfkill btbcm btintel btmtk btrtl btusb virtio virtio_ring virtio_pci
    virtio_pci_legacy_dev virtio_pci_modern_dev virtio_console usb-common usbcore udc-core dummy_hcd
    gadgetfs libcomposite configfs usb_f_fs 9pnet 9pnet_virtio 9p netfs fscache crc16"
lacking=0
if [ -e "$cache/initrd.img" ]; then
    present=$(zcat "$cache/initrd.img" | cpio -t --quiet 2>/dev/null | sed -n 's|.*/\([^/]*\)\.ko[^/]*$|\1|p')
    for m in $wanted_modules; do grep -qx -- "$m" <<< "$present" || lacking=1; done
fi
if [ ! -e "$cache/initrd.img" ] || [ Tests/USBFixture/setup.sh -nt "$cache/initrd.img" ] \
    || [ Tests/USBFixture/initrd-init -nt "$cache/initrd.img" ] || ((lacking)); then
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,usr,mnt/work,etc,lib/modules}
    cp /bin/busybox "$root/bin/busybox"
    # The host's /usr is the guest's: its loader and libraries must be found where Debian looks.
    ln -s usr/lib64 "$root/lib64"
    ln -s /usr/lib/x86_64-linux-gnu "$root/lib/x86_64-linux-gnu"
    read -r -a modules <<< "$(echo $wanted_modules)"
    moddir="$cache/kpkg/lib/modules/$kversion"
    for m in "${modules[@]}"; do
        file=$(find "$moddir/kernel" -name "$m.ko*" | head -1)
        [ -n "$file" ] || { echo "usb-fixture: module $m not found"; exit 1; }
        dest="$root/lib/modules/$kversion/${file#"$moddir"/}"
        mkdir -p "$(dirname "$dest")"
        cp "$file" "$dest"
    done
    cp "$moddir"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kversion/" 2>/dev/null || true
    depmod -b "$root" "$kversion"
    install -m 0755 Tests/USBFixture/initrd-init "$root/init"
    chmod 0755 "$root"  # mktemp -d made it 0700: every other user would be locked out of /
    # Written aside and renamed: a guest booting meanwhile reads the old or the new one, never half of one.
    (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$cache/initrd.img.new"
    mv "$cache/initrd.img.new" "$cache/initrd.img"
fi
echo "usb-fixture: ready (kernel $kversion)"
