# Sourced by the deployment checks that need a Debian release of their own
# (demo-setup-clean-debian.sh, package-on-debian.sh): a debootstrapped root made
# once and cached, and throw-away overlays over it entered with chroot.
#
# The sourcing script sets `name` (its messages' prefix) and may set
# `root_env` (VAR=value… for in_root), `root_path` (in_root's PATH) and a
# function `mount_extra ROOT` (what else mount_into mounts).
root_env=()
root_path=/usr/sbin:/usr/bin:/sbin:/bin
mounts=()

fail() { echo "$name: $*" >&2; exit 1; }

in_root() {  # in_root ROOT COMMAND
    chroot "$1" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH="$root_path" DEBIAN_FRONTEND=noninteractive \
        "${root_env[@]}" bash -c "$2"
}

mount_into() {  # mount_into ROOT: what a chroot needs (proc, dev, DNS), then mount_extra's
    mount -t proc proc "$1/proc" && mounts=("$1/proc" "${mounts[@]}")
    mount --rbind /dev "$1/dev" && mount --make-rslave "$1/dev" && mounts=("$1/dev" "${mounts[@]}")
    cp -L /etc/resolv.conf "$1/etc/resolv.conf"
    if declare -F mount_extra >/dev/null; then mount_extra "$1"; fi
}

unmount_all() {
    local m
    for m in "${mounts[@]}"; do umount -R "$m" 2>/dev/null || umount -lR "$m" 2>/dev/null || true; done
    mounts=()
}

# cached_root SUITE BASE "PACKAGES": debootstrap --variant=minbase SUITE into
# BASE once, then apt-get install PACKAGES there; made again when BASE was made
# with another package list (BASE/.complete holds it). Log: BASE.log.
cached_root() {
    local suite=$1 base=$2 packages=$3 mirror
    if [ -e "$base/.complete" ] && [ "$(cat "$base/.complete")" = "$packages" ]; then return 0; fi
    mirror=${ITCB_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^ ]+/debian/?$' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null | head -1 || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    mkdir -p "$(dirname "$base")"
    rm -rf "$base.tmp" "$base"
    echo "$name: debootstrap --variant=minbase $suite from $mirror, then $packages (once, cached in $base)"
    debootstrap --variant=minbase "$suite" "$base.tmp" "$mirror" > "$base.log" 2>&1 \
        || fail "debootstrap failed (see $base.log)"
    trap unmount_all EXIT
    mount_into "$base.tmp"
    in_root "$base.tmp" "apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages >/dev/null && apt-get clean" \
        >> "$base.log" 2>&1 || fail "apt-get in the new root failed (see $base.log)"
    unmount_all
    trap - EXIT
    echo "$packages" > "$base.tmp/.complete"
    mv "$base.tmp" "$base"
}

# overlay_root BASE: a throw-away overlay over BASE at $root ($work/root), with
# mount_into's mounts; removed on exit (kept, path said, when keep=1).
overlay_root() {
    work=$(mktemp -d "/var/tmp/itcb-$name.XXXXXX")
    root=$work/root
    mkdir -p "$work/upper" "$work/work" "$root"
    trap overlay_cleanup EXIT
    mount -t overlay overlay -o "lowerdir=$1,upperdir=$work/upper,workdir=$work/work" "$root"
    mount_into "$root"
}

overlay_cleanup() {
    unmount_all
    umount "$root" 2>/dev/null || umount -l "$root" 2>/dev/null || true
    if [ "${keep:-0}" = 1 ]; then echo "$name: kept $work"; else rm -rf "$work"; fi
}
