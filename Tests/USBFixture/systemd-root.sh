# Sourced by the initramfs init when the tests want systemd as PID 1: builds a
# root on tmpfs (merged-/usr layout over the host's /usr), installs the
# project's udev rule, unit and options as a package would, a guest agent
# service that runs guest.sh, and switches root to systemd.
# The new root has no /lib/modules. The four-dongle guest (a "fleet" file in the
# work folder): four dummy_hcd controllers, full speed, and FunctionFS instead of GadgetFS.
if [ -e /mnt/work/fleet ]; then
    modprobe dummy_hcd num=4 is_high_speed=0; modprobe usb_f_fs; modprobe btusb
else
    for m in dummy_hcd gadgetfs btusb; do modprobe $m; done
fi
R=/newroot
mkdir -p $R && mount -t tmpfs -o mode=0755 root $R
mkdir -p $R/usr $R/mnt/work $R/etc/systemd/system/multi-user.target.wants $R/etc/udev/rules.d \
    $R/etc/itcb-dongle $R/etc/default $R/run $R/tmp $R/proc $R/sys $R/dev $R/var/lib $R/var/log $R/root
chmod 1777 $R/tmp
# node_exporter's textfile directory, as Debian's package leaves it (root's, 0755): the unit links its metrics there.
mkdir -p $R/var/lib/prometheus/node-exporter
for d in bin sbin lib lib64; do ln -s usr/$d $R/$d; done
cp /etc/passwd /etc/group $R/etc/
printf 'systemd-journal:x:101:\nsystemd-network:x:102:\n' >> $R/etc/group
: > $R/etc/machine-id
cp /usr/lib/os-release $R/etc/os-release
W=/mnt/work
sed 's|/usr/bin/itcb-dongle|/mnt/work/itcb-dongle|g' $W/70-itcb-dongle.rules > $R/etc/udev/rules.d/70-itcb-dongle.rules
sed 's|/usr/bin/itcb-dongle|/mnt/work/itcb-dongle|g' $W/itcb-dongle@.service > $R/etc/systemd/system/itcb-dongle@.service
cp $W/itcb-dongle.default $R/etc/default/itcb-dongle
echo "ITCB_NAME=Unit8" >> $R/etc/default/itcb-dongle
echo "0a12:0001" > $R/etc/itcb-dongle/dongles
# The fleet: each instance its own name, from its per-dongle file (the unit reads /etc/itcb-dongle/%i.conf).
[ ! -e $W/fleet ] || for n in 1 2 3 4; do echo "ITCB_NAME=Fleet$n" > $R/etc/itcb-dongle/$n-1.conf; done
cat > $R/etc/systemd/system/guest-agent.service <<UNIT
[Unit]
Description=USB fixture guest agent
After=systemd-udevd.service
[Service]
ExecStart=/bin/sh /mnt/work/guest.sh
StandardOutput=file:/mnt/work/guest.log
StandardError=inherit
ExecStopPost=/bin/sh -c 'echo \$EXIT_STATUS > /mnt/work/guest.rc; systemctl --force --force poweroff'
UNIT
ln -s ../guest-agent.service $R/etc/systemd/system/multi-user.target.wants/guest-agent.service
ln -s /usr/lib/systemd/system/multi-user.target $R/etc/systemd/system/default.target
mount --move /usr $R/usr
mount --move /mnt/work $R/mnt/work
mount --move /dev $R/dev
umount /proc /sys /tmp /run 2>/dev/null
exec switch_root $R /usr/lib/systemd/systemd
