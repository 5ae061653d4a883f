"""The udev rule of the deployment under a real systemd-udevd in the
guest: the emulated dongle's node gets group itcb, mode 0660 and SYSTEMD_WANTS
naming our unit instance only when the dongle is configured; the unprivileged
itcb user can then open it, and only thanks to the rule."""
import os

from harness import REPO

RULE = os.path.join(REPO, "udev", "70-itcb-dongle.rules")
NODE = "$(printf /dev/bus/usb/%03d/%03d $(cat /sys/bus/usb/devices/1-1/busnum) $(cat /sys/bus/usb/devices/1-1/devnum))"


def setup_udev(guest):
    with open(RULE) as f:
        rule = f.read().replace("/usr/bin/itcb-dongle", "/mnt/work/itcb-dongle")
    with open(os.path.join(guest.work, "70-itcb-dongle.rules"), "w") as f:
        f.write(rule)
    code, out = guest.run(
        "mkdir -p /etc/udev/rules.d /etc/itcb-dongle /run/udev && cp 70-itcb-dongle.rules /etc/udev/rules.d/"
        " && : > /etc/itcb-dongle/dongles && ln -sf /usr/bin/udevadm /run/systemd-udevd && /run/systemd-udevd --daemon"
        " && udevadm settle -t 10 && echo udevd up", timeout=60)
    assert code == 0 and "udevd up" in out, out


def retrigger(guest, dongles):
    code, out = guest.run(f"printf '{dongles}' > /etc/itcb-dongle/dongles; udevadm trigger --action=add"
                          " --subsystem-match=usb; udevadm settle -t 10; echo NODE=" + NODE + "; stat -c '%G %a' " + NODE +
                          "; udevadm info -q property " + NODE + " | grep -E 'ITCB_|SYSTEMD_WANTS|TAGS' ; true",
                          timeout=60)
    assert code == 0, out
    return out


def run_as_itcb(guest):
    return guest.run("timeout 15 /usr/bin/setpriv --reuid=990 --regid=990 --groups=990 ./itcb-dongle --controller-info"
                     " --transport usb:1-1 2>&1; echo rc=$?", timeout=60)[1]


def test_rule_grants_group_and_starts_only_configured_dongles(guest):
    # Before udev applies the rule, the itcb user cannot open the dongle.
    out = run_as_itcb(guest)
    assert "permission denied" in out and "rc=3" in out, out
    setup_udev(guest)

    out = retrigger(guest, "0a12:0001\\n")
    assert "itcb 660" in out, out
    assert "SYSTEMD_WANTS=itcb-dongle@1-1.service" in out and "systemd" in out, out
    # With the rule, the unprivileged user drives the dongle.
    info = run_as_itcb(guest)
    assert "HCI version:" in info and "rc=0" in info, info

    out = retrigger(guest, "# nothing configured\\n")
    assert "itcb 660" in out and "ITCB_CONFIGURED=0" in out, out
    assert "SYSTEMD_WANTS" not in out, out

    out = retrigger(guest, "1-1\\n")  # by bus-port path
    assert "SYSTEMD_WANTS=itcb-dongle@1-1.service" in out, out

    # The root hub is not Bluetooth: untouched.
    code, out = guest.run("stat -c '%G %a' /dev/bus/usb/001/001; udevadm info -q property /dev/bus/usb/001/001"
                          " | grep -c SYSTEMD_WANTS; true")
    assert "itcb" not in out.splitlines()[0] and out.splitlines()[1].strip() == "0", out
