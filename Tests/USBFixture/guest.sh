# Runs inside the guest (sh from busybox; tools from the host's /usr over 9p).
# Brings up the emulated dongle, then executes the host's commands one by one:
# cmd/N.sh → cmd/N.out and cmd/N.rc, until cmd/stop appears.
W=/mnt/work
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
for m in dummy_hcd gadgetfs btusb; do modprobe $m || echo "modprobe $m failed"; done
mkdir -p /dev/gadget && mount -t gadgetfs gadgetfs /dev/gadget
port=""
for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = hci ] && port=$(basename "$p")
done
[ -n "$port" ] || { echo "no virtio port named hci"; exit 1; }
/usr/bin/python3 -u $W/gadget_dongle.py /dev/gadget /dev/$port > $W/gadget.log 2>&1 &
echo $! > /run/gadget.pid
for i in $(seq 100); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && break; sleep 0.1; done
echo ready > $W/agent.ready
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
