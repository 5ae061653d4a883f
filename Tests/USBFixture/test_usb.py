"""The USB transport (issue 4) on a real Linux USB stack: a QEMU guest whose
dummy_hcd carries a GadgetFS Bluetooth dongle bridged to a Bumble controller.
btusb binds it first, as on a real machine; our binary takes it over."""
import asyncio
import json
import os
import subprocess
import sys
import time

from bumble_client import EightBall, central
from harness import REPO, SLUGS, stop_process

BUMBLE_8BALL = os.path.join(REPO, "Tests", "Support", "bumble_8ball.py")


def start(guest, name, args, user=None):
    """Starts our binary in the guest in the background; its log is NAME.log, its exit code NAME.rc."""
    command = f"/usr/bin/setpriv --reuid={user} --regid={user} --clear-groups ./itcb-dongle" if user is not None \
        else "./itcb-dongle"
    code, out = guest.run(f"rm -f {name}.rc; ( {command} {args} > {name}.log 2>&1; echo $? > {name}.rc ) &"
                          f" sleep 0.2; echo started")
    assert code == 0, out


def wait_exit(guest, name, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = guest.file(f"{name}.rc").strip()
        if text:
            return int(text)
        time.sleep(0.2)
    raise AssertionError(f"{name} did not exit:\n{guest.file(name + '.log')[-2000:]}")


def signal(guest, name, sig="TERM"):
    guest.run(f"pkill -{sig} -f 'itcb-dongle' ; true")


def btusb_bound(guest):
    code, out = guest.run("for i in $(seq 50); do [ -e /sys/class/bluetooth/hci0 ] && break; sleep 0.2; done;"
                          " readlink /sys/bus/usb/devices/1-1:1.0/driver; ls /sys/class/bluetooth")
    return "btusb" in out and "hci0" in out


def test_lists_emulated_dongle_with_btusb(guest):
    code, out = guest.run("./itcb-dongle --list-controllers")
    assert code == 0, out
    line = next(l for l in out.splitlines() if "0a12:0001" in l)
    assert "usb:1-1" in line and "btusb" in line


def test_peripheral_over_usb(guest, link):
    start(guest, "periph", "--role peripheral --transport usb --name UsbBall --log-level debug")
    guest.wait_for_file_text("periph.log", "info: advertising", timeout=40)
    log = guest.file("periph.log")
    assert "detached from its kernel driver" in log

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "UsbBall", mtu=247)
            answers = [await ball.ask(f"Over USB {i}?") for i in range(50)]
            long_answer = await ball.ask("u" * 299 + "?")  # ACL fragments beyond the bulk max packet size
            await ball.disconnect()
            return answers + [long_answer], ball.connection.att_mtu

    answers, mtu = asyncio.run(asyncio.wait_for(scenario(), 240))
    assert len(answers) == 51 and all(a.decode() in SLUGS for a in answers)
    assert mtu == 247
    signal(guest, "periph")
    assert wait_exit(guest, "periph") == 0, guest.file("periph.log")
    # The interface went back to the kernel: btusb is bound and hci0 is back.
    assert btusb_bound(guest), guest.file("periph.log")


def test_central_over_usb(guest, link):
    peer = subprocess.Popen([sys.executable, BUMBLE_8BALL, "--transport", f"tcp-client:127.0.0.1:{link.ports[2]}",
                             "--name", "HostBall"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        assert peer.stdout.readline().strip() == "READY"
        code, out = guest.run("./itcb-dongle --role central --transport usb --peer HostBall --question 'Via USB?'"
                              " --count 20 --json 2> central.err", timeout=180)
        assert code == 0, out + guest.file("central.err")
        records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert len(records) == 20 and all(r["slug"] in SLUGS for r in records)
    finally:
        stop_process(peer)
    assert btusb_bound(guest)


def test_unplug_and_replug_resumes_without_restart(guest, link):
    start(guest, "resume", "--role peripheral --transport usb --name Phoenix8 --log-level debug")
    guest.wait_for_file_text("resume.log", "info: advertising", timeout=40)
    guest.run("kill -USR1 $(cat /run/gadget.pid)")
    guest.wait_for_file_text("resume.log", "waiting for it to come back", timeout=20)
    guest.run("kill -USR2 $(cat /run/gadget.pid)")
    guest.wait_for_file_text("resume.log", "dongle is back", timeout=30)
    guest.wait_for_file_text("resume.log", "info: advertising", timeout=40, after=1)

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Phoenix8")
            return await ball.ask("Back again?")

    assert asyncio.run(asyncio.wait_for(scenario(), 60)).decode() in SLUGS
    assert not guest.file("resume.rc").strip(), "the program restarted or exited"
    signal(guest, "resume")
    assert wait_exit(guest, "resume") == 0


def test_exit_on_unplug(guest):
    start(guest, "unplug", "--role peripheral --transport usb --name Gone8 --exit-on-unplug")
    guest.wait_for_file_text("unplug.log", "info: advertising", timeout=40)
    guest.run("kill -USR1 $(cat /run/gadget.pid)")
    try:
        assert wait_exit(guest, "unplug") == 8, guest.file("unplug.log")
    finally:
        guest.run("kill -USR2 $(cat /run/gadget.pid); for i in $(seq 50); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && break; sleep 0.2; done")


def test_user_without_access_gets_permission_error(guest):
    code, out = guest.run("for i in $(seq 50); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && break; sleep 0.2; done;"
                          " /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ./itcb-dongle --role peripheral"
                          " --transport usb 2>&1; echo rc=$?")
    assert "rc=3" in out, out
    error = [l for l in out.splitlines() if "error" in l]
    assert len(error) == 1 and "permission denied" in error[0] and "udev rule" in error[0], out


def test_controller_info_over_usb_after_reset(guest):
    code, out = guest.run("for i in $(seq 50); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && break; sleep 0.2; done;"
                          " ./itcb-dongle --controller-info --transport usb:0a12:0001 --usb-reset 2>&1", timeout=60)
    assert code == 0, out
    assert "HCI version:" in out and "ACL buffers:" in out, out
    assert btusb_bound(guest)
