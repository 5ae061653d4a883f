# Sourced in the USB fixture's guest (busybox sh, the host's /usr): starts a
# system D-Bus and BlueZ's bluetoothd on hci0 (btusb on the emulated dongle),
# with a static random address: the Bumble controller behind the dongle has no
# public address (00:00:00:00:00:00), like many cheap controllers, so bluetoothd
# takes one from /var/lib/bluetooth/addresses (it would derive one with the
# kernel's AF_ALG crypto, which this guest's kernel lacks).
W=/mnt/work
mkdir -p /run/dbus /var/lib/bluetooth /etc/bluetooth
cat > /run/dbus/system.conf <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
CONF
printf '[General]\nName = BlueZ\nControllerMode = le\n[Policy]\nAutoEnable=true\n' > /etc/bluetooth/main.conf
dbus-daemon --config-file=/run/dbus/system.conf --fork --nopidfile || { echo "dbus-daemon did not start"; exit 1; }
manufacturer=$(btmgmt --index 0 info | sed -n 's/.*manufacturer \([0-9]*\).*/\1/p')
printf '[Static]\n0x%04x=%s\n' "${manufacturer:-65535}" "${BLUEZ_ADDRESS:-C2:B1:0E:00:00:01}" > /var/lib/bluetooth/addresses
/usr/libexec/bluetooth/bluetoothd -n -d -f /etc/bluetooth/main.conf > $W/bluetoothd.log 2>&1 &
echo $! > /run/bluetoothd.pid
for i in $(seq 100); do
    /usr/bin/python3 -c "import dbus; dbus.SystemBus().get_object('org.bluez', '/org/bluez/hci0').Introspect()" \
        >/dev/null 2>&1 && break
    sleep 0.1
done
btmgmt --index 0 info
