#!/usr/bin/env bash
# Boots the USB fixture's QEMU guest and runs one script in it.
#
#   Tests/USBFixture/run-guest.sh [--work DIR] [--hci-port PORT] [--run 'COMMANDS']
#                                 [--binary FILE] [--script FILE]
#                                 [--timeout SECONDS] [--parent PID] [--kernel 6.1|6.12]
#
# The guest (Debian 12's 6.1 kernel, or with --kernel 6.12 Debian 13's; TCG, no network) mounts the host's /usr read-only
# and DIR (default: a new temporary folder) read-write at /mnt/work over 9p,
# runs DIR/guest.sh with sh, writes its exit status to DIR/guest.rc and powers
# off. The guest kernel looks for firmware in DIR/linuxfw first (btusb's
# btintel/btrtl load from there when a test puts files in it). The default guest.sh (Tests/USBFixture/guest.sh) plugs in the emulated
# dongle (gadget_dongle.py), waits for btusb/hci0, then runs --run's COMMANDS
# (as root, in /mnt/work) and ends with their status; without --run it serves
# commands written by the host (cmd/N.sh, as fixture.py does) until cmd/stop.
# --script FILE replaces guest.sh.  --binary FILE is copied to DIR/itcb-dongle.
# --hci-port: a virtio serial port named "hci" in the guest is QEMU's TCP
# connection to 127.0.0.1:PORT (a Bumble H4 tcp-server controller, e.g. from
# Tests/USBFixture/bumble_link.py); QEMU reconnects if it goes away and returns.
# Several ports, comma-separated (P0,P1,…), make ports "hci", "hci1", "hci2", …
# (one controller per dongle of the four-dongle guest, ffs_dongle.py).
# --timeout (default 600): hard limit; QEMU is killed and the status is 124.
# --parent PID: QEMU is killed as soon as PID is gone (the test runner died).
#
# Exit status: the guest script's, 124 on timeout, 125 if the guest ended
# without one (kernel panic, init failure: see DIR/console.log).
# Logs in DIR: console.log (serial console), guest.log (the script's output),
# gadget.log (the emulated dongle), dmesg.log (kernel log, at the end),
# commands.out (--run's output, also printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache="$repo/.cache/usb-fixture"

work="" script="$here/guest.sh" port="" timeout=600 parent="" commands="" binary=""
while (($#)); do
    case "$1" in
        --work) work=$2; shift 2 ;;
        --script) script=$2; shift 2 ;;
        --run) commands=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        --hci-port) port=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --parent) parent=$2; shift 2 ;;
        --kernel) case "$2" in 6.1) ;; 6.12) cache="$cache-6.12" ;; *) echo "run-guest: --kernel 6.1 or 6.12" >&2; exit 2 ;; esac
                  shift 2 ;;
        -h|--help) sed -n '2,${/^#/!q;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) echo "run-guest: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work=$(mktemp -d /tmp/usb-guest-XXXXXX)
    echo "run-guest: work folder $work" >&2
fi
mkdir -p "$work"
chmod 0755 "$work"  # the guest's unprivileged users reach the binary through it
work=$(cd "$work" && pwd)
cp "$script" "$work/guest.sh"
cp "$here/gadget_dongle.py" "$here/ffs_dongle.py" "$here/usbprobe.py" "$work/"
# The vendor personalities (gadget_dongle.py --personality): Python stdlib only, run by the guest's python3.
[ ! -e "$repo/Tests/PythonSupport/personalities.py" ] || cp "$repo/Tests/PythonSupport/personalities.py" "$work/"
[ -z "$binary" ] || cp "$binary" "$work/itcb-dongle"
rm -f "$work/guest.rc" "$work/commands.sh" "$work/commands.out"
[ -z "$commands" ] || printf '%s\n' "$commands" > "$work/commands.sh"

"$here/setup.sh" >/dev/null

serial_ports=()
if [ -n "$port" ]; then
    index=0
    for p in ${port//,/ }; do
        id=hci; ((index == 0)) || id=hci$index
        serial_ports+=(-chardev "socket,id=$id,host=127.0.0.1,port=$p,reconnect=1" -device "virtserialport,chardev=$id,name=$id")
        index=$((index + 1))
    done
else
    serial_ports=(-chardev null,id=hci -device virtserialport,chardev=hci,name=hci)
fi

qemu-system-x86_64 \
    -accel tcg -cpu max -m 1024 -smp 2 \
    -nographic -no-reboot -nodefaults -serial "file:$work/console.log" -monitor none \
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" \
    -append "console=ttyS0 panic=-1 quiet" \
    -virtfs local,path=/usr,mount_tag=hostusr,security_model=none,readonly=on \
    -virtfs "local,path=$work,mount_tag=work,security_model=none" \
    -device virtio-serial-pci "${serial_ports[@]}" \
    </dev/null >"$work/qemu.log" 2>&1 &
qemu=$!
trap 'kill "$qemu" 2>/dev/null || true; wait "$qemu" 2>/dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The watchdog, in its own session so that killing this script's process group
# does not take it along: QEMU dies at the hard timeout, or as soon as this
# script or the --parent process is gone.
rm -f "$work/.timed-out" "$work/.parent-gone"
setsid bash -c '
    qemu=$1 runner=$2 parent=$3 limit=$4 work=$5
    end=$((SECONDS + limit))
    while kill -0 "$qemu" 2>/dev/null; do
        if ((SECONDS >= end)); then : > "$work/.timed-out"; break; fi
        kill -0 "$runner" 2>/dev/null || break
        [ -z "$parent" ] || kill -0 "$parent" 2>/dev/null || { : > "$work/.parent-gone"; break; }
        sleep 1
    done
    kill -TERM "$qemu" 2>/dev/null || exit 0
    for i in 1 2 3 4 5; do kill -0 "$qemu" 2>/dev/null || exit 0; sleep 1; done
    kill -KILL "$qemu" 2>/dev/null' watchdog "$qemu" "$$" "$parent" "$timeout" "$work" </dev/null >/dev/null 2>&1 &

status=0
wait "$qemu" || status=$?
trap - EXIT
if [ -e "$work/.timed-out" ]; then
    echo "run-guest: timed out after $timeout s; logs in $work" >&2
    exit 124
fi
if [ -e "$work/.parent-gone" ]; then
    echo "run-guest: process $parent is gone; QEMU stopped" >&2
    exit 125
fi
[ ! -e "$work/commands.out" ] || cat "$work/commands.out"
if [ -s "$work/guest.rc" ]; then
    exit "$(cat "$work/guest.rc")"
fi
echo "run-guest: the guest ended without a status (QEMU status $status); see $work/console.log and $work/qemu.log" >&2
exit 125
