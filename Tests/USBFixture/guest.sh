# Runs inside the guest (sh from busybox; tools from the host's /usr over 9p).
# Plugs in the emulated dongle, waits until btusb has bound it (hci0, as on a
# real machine), then runs commands.sh if present (run-guest.sh --run) or else
# executes the host's commands one by one: cmd/N.sh → cmd/N.out and cmd/N.rc,
# until cmd/stop appears.
W=/mnt/work
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
if [ -e $W/fleet ]; then
    # Four dongles (test_fleet.py): dummy_hcd num=4 and usb_f_fs were loaded before
    # systemd took over (systemd-root.sh); dongle N is configfs gadget itcbN on
    # dummy_udc.N-1 (bus N, path N-1), its controller behind virtio port hci (N=1)
    # or hciN-1. gadgetN.log, /run/gadgetN.pid.
    grep -q " /sys/kernel/config " /proc/mounts || mount -t configfs configfs /sys/kernel/config
    for n in 1 2 3 4; do
        name=hci; [ $n = 1 ] || name=hci$((n - 1))
        port=""
        for p in /sys/class/virtio-ports/*; do [ "$(cat "$p/name" 2>/dev/null)" = $name ] && port=$(basename "$p"); done
        [ -n "$port" ] || { echo "no virtio port named $name"; exit 1; }
        (cd $W && exec /usr/bin/python3 -u ffs_dongle.py $(cat gadget.options 2>/dev/null) $n /dev/$port) > $W/gadget$n.log 2>&1 &
        echo $! > /run/gadget$n.pid
    done
    for n in 1 2 3 4; do
        for i in $(seq 300); do [ -e /sys/bus/usb/devices/$n-1/idVendor ] && break; sleep 0.1; done
    done
    {
        echo "kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
        for n in 1 2 3 4; do
            echo "dongle $n-1 $(cat /sys/bus/usb/devices/$n-1/idVendor 2>/dev/null):$(cat /sys/bus/usb/devices/$n-1/idProduct 2>/dev/null)" \
                 "serial $(cat /sys/bus/usb/devices/$n-1/serial 2>/dev/null) speed $(cat /sys/bus/usb/devices/$n-1/speed 2>/dev/null) Mbit/s"
        done
    } > $W/agent.tmp
    mv $W/agent.tmp $W/agent.ready
    n=0
    while [ ! -e $W/cmd/stop ]; do
        if [ -e $W/cmd/$n.sh ]; then
            sh $W/cmd/$n.sh > $W/cmd/$n.out 2>&1
            echo $? > $W/cmd/$n.tmp && mv $W/cmd/$n.tmp $W/cmd/$n.rc
            n=$((n + 1))
        else
            sleep 0.1
        fi
    done
    for n in 1 2 3 4; do kill "$(cat /run/gadget$n.pid)" 2>/dev/null; done
    exit 0
fi
for m in dummy_hcd gadgetfs btusb usbmon; do modprobe $m || echo "modprobe $m failed"; done
# usbmon's text capture of bus 1 (/sys/kernel/debug/usb/usbmon/1u): what went over the bus.
grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/gadget
grep -q " /dev/gadget " /proc/mounts || mount -t gadgetfs gadgetfs /dev/gadget
port=""
for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = hci ] && port=$(basename "$p")
done
[ -n "$port" ] || { echo "no virtio port named hci"; exit 1; }
echo "/dev/$port" > /run/gadget.port
# The kernel's firmware (btintel, btrtl) comes from linuxfw/ in the work folder, which the tests fill or empty.
mkdir -p $W/linuxfw
printf %s $W/linuxfw > /sys/module/firmware_class/parameters/path
# gadget.options (optional, one line): extra options, e.g. --trace to log every packet, --personality CHIP.
/usr/bin/python3 -u $W/gadget_dongle.py $(cat $W/gadget.options 2>/dev/null) /dev/gadget /dev/$port > $W/gadget.log 2>&1 &
echo $! > /run/gadget.pid
for i in $(seq 100); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && break; sleep 0.1; done
for i in $(seq 100); do [ -e /sys/class/bluetooth/hci0 ] && break; sleep 0.1; done
{
    echo "kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
    echo "dongle $(cat /sys/bus/usb/devices/1-1/idVendor 2>/dev/null):$(cat /sys/bus/usb/devices/1-1/idProduct 2>/dev/null)" \
         "speed $(cat /sys/bus/usb/devices/1-1/speed 2>/dev/null) Mbit/s" \
         "driver $(basename "$(readlink /sys/bus/usb/devices/1-1:1.0/driver 2>/dev/null)" 2>/dev/null)" \
         "$(ls /sys/class/bluetooth 2>/dev/null)"
} > $W/agent.tmp
mv $W/agent.tmp $W/agent.ready
if [ -e $W/commands.sh ]; then  # run-guest.sh --run: one batch, then power off with its status
    (export PATH=/bin:/sbin:/usr/bin:/usr/sbin; cd $W && sh $W/commands.sh) > $W/commands.out 2>&1
    status=$?
    kill "$(cat /run/gadget.pid)" 2>/dev/null
    exit $status
fi
n=0
while [ ! -e $W/cmd/stop ]; do
    if [ -e $W/cmd/$n.sh ]; then
        sh $W/cmd/$n.sh > $W/cmd/$n.out 2>&1
        echo $? > $W/cmd/$n.tmp && mv $W/cmd/$n.tmp $W/cmd/$n.rc
        n=$((n + 1))
    else
        sleep 0.1
    fi
done
kill "$(cat /run/gadget.pid)" 2>/dev/null
exit 0
