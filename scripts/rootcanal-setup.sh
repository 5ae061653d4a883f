#!/usr/bin/env bash
# Makes Google's RootCanal virtual controller runnable here and prints the
# command that starts it (one line, for Tests/PythonSupport/rootcanal.py).
#
# RootCanal's Linux binary (PyPI `rootcanal` 1.13.0) needs glibc >= 2.39 and
# GLIBCXX_3.4.32, newer than Debian 12's. So a minimal Debian trixie tree is
# made with debootstrap, once, outside the clone (the cache below, so CI does not
# rebuild it every run), and the binary runs with that tree's dynamic loader and
# libraries (no chroot(2) needed at run time, so no root either: the tree is the
# chroot's root, used through its ld.so). Idempotent: a finished tree is reused; concurrent runs wait on a lock.
#
#   ITCB_CACHE          cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/itcb-dongle)
#   ITCB_DEBIAN_MIRROR  Debian mirror for debootstrap (default: the one apt uses here)
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.13.0
cache=${ITCB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/itcb-dongle}
root=$cache/trixie-rootcanal
stamp=$root/.itcb-complete-$version
binary=$root/opt/rootcanal/rootcanal
loader=$root/lib64/ld-linux-x86-64.so.2
libs=$root/usr/lib/x86_64-linux-gnu

fail() {
    echo "rootcanal-setup: cannot make the RootCanal environment: $*" >&2
    echo "rootcanal-setup: needs root (or sudo) for debootstrap, the Debian mirror (trixie) and PyPI; see docs/INTEROP.md" >&2
    exit 1
}

command_line() { echo "$loader --library-path $libs $binary"; }

if [ -f "$stamp" ]; then
    command_line
    exit 0
fi

[ "$(uname -m)" = x86_64 ] || fail "only x86_64 is supported (the wheel's Linux binary is x86_64)"
mkdir -p "$cache"
exec 9>"$cache/trixie-rootcanal.lock"
flock 9
if [ ! -f "$stamp" ]; then
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo -n)
    if ! command -v debootstrap >/dev/null; then
        echo "rootcanal-setup: installing debootstrap" >&2
        "${sudo_cmd[@]}" apt-get update -qq >&2 || fail "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq debootstrap >/dev/null \
            || fail "apt-get install debootstrap failed"
    fi
    [ -e /usr/share/debootstrap/scripts/trixie ] || fail "this debootstrap does not know trixie"
    mirror=${ITCB_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^ ]+/debian/?$' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null | head -1 || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    "${sudo_cmd[@]}" rm -rf "$root.tmp"
    echo "rootcanal-setup: debootstrap --variant=minbase trixie from $mirror (once; 30 s to a few minutes)" >&2
    "${sudo_cmd[@]}" debootstrap --variant=minbase trixie "$root.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1 \
        || fail "debootstrap failed (last lines of $cache/debootstrap.log: $(tail -3 "$cache/debootstrap.log" | tr '\n' ' '))"
    download=$(mktemp -d)
    trap 'rm -rf "$download"' EXIT
    python3 -m pip download -q --no-deps -d "$download" "rootcanal==$version" >&2 \
        || fail "pip download rootcanal==$version failed"
    python3 - "$download"/rootcanal-*.whl "$download" <<'EOF' || fail "the wheel has no linux-x86_64 binary"
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract("rootcanal/bin/linux-x86_64/rootcanal", sys.argv[2])
EOF
    "${sudo_cmd[@]}" install -D -m 0755 "$download/rootcanal/bin/linux-x86_64/rootcanal" "$root.tmp/opt/rootcanal/rootcanal"
    "${sudo_cmd[@]}" rm -rf "$root"
    "${sudo_cmd[@]}" mv "$root.tmp" "$root"
fi
"$loader" --library-path "$libs" "$binary" --version >/dev/null 2>&1 \
    || fail "$binary does not start with the trixie libraries ($("$loader" --library-path "$libs" "$binary" --version 2>&1 | tail -1))"
touch "$stamp"
command_line
