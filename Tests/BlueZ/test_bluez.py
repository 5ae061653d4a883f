"""Interop with BlueZ (Debian 12's bluez 5.66), the Linux host stack,
in the USB fixture's QEMU guest:

 host                                              guest (Debian 6.1 kernel, host /usr)
 bumble_link.py --connection-address               btusb → hci0 → bluetoothd (D-Bus)
   U0 ◄── QEMU virtio serial ──► emulated dongle ──┘   bluez_central.py / bluez_8ball.py
   U1 ◄── H4/TCP ── our binary (host side)              (python3-dbus + GLib)

Both controllers are on one Bumble link, so BlueZ in the guest and our binary on
the host talk over the virtual radio; the kernel and BlueZ drive the dongle as
they would a real one.

- A BlueZ central (D-Bus: discovery, Connect, ServicesResolved, StartNotify,
  WriteValue with response, ReadValue) asks our peripheral 20 questions and sees
  the 0x0E refusal; BlueZ writes 0x0002 (indications) to our Service Changed CCCD.
- Our central asks a BlueZ GATT server (GattManager1 application) 20 questions;
  BlueZ's D-Bus server refuses "Tell me" with ATT error 0x80 (org.bluez.Error.Failed):
  our central reports it as an ATT error (exit 1), no crash. Raising an error
  name BlueZ does not know gives 0x0E instead: "please rephrase" (exit 5).
Every HCI command our binary sends gets status 0 (from its btsnoop)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "USBFixture"))
from fixture import Guest, Link  # noqa: E402
from harness import BINARY, SLUGS, Dongle  # noqa: E402
from rootcanal import BUMBLE_OPTIONAL_REFUSALS, assert_every_command_succeeded  # noqa: E402

SERVICE_UUID_LE = bytes.fromhex("8e38140a27be409089554fc4b5698d1e")[::-1]


@pytest.fixture(scope="module", autouse=True)
def prepared():
    result = subprocess.run([os.path.join(REPO, "Tests", "USBFixture", "setup.sh")], capture_output=True, text=True)
    assert result.returncode == 0, f"Tests/USBFixture/setup.sh failed:\n{result.stdout}{result.stderr}"
    missing = [p for p in ("/usr/libexec/bluetooth/bluetoothd", "/usr/bin/dbus-daemon", "/usr/bin/btmgmt")
               if not os.path.exists(p)]
    probe = subprocess.run(["/usr/bin/python3", "-c", "import dbus, gi"], capture_output=True, text=True)
    assert not missing and probe.returncode == 0, \
        f"BlueZ suite needs Debian's bluez, dbus, python3-dbus and python3-gi (scripts/setup.sh): missing {missing}" \
        f" {probe.stderr.strip()}"


@pytest.fixture(scope="module")
def link():
    c = Link(3, options=["--connection-address"])
    yield c
    c.stop()


@pytest.fixture(scope="module")
def bluez(link):
    """One guest with D-Bus and bluetoothd running on hci0 (btusb on the dongle)."""
    guest = Guest(link.ports[0])
    try:
        for name in ("bluez-start.sh", "bluez_central.py", "bluez_8ball.py"):
            shutil.copy(os.path.join(HERE, name), guest.work)
        code, out = guest.run(". ./bluez-start.sh", timeout=90)
        assert code == 0 and "powered" in out, f"BlueZ did not start ({code}):\n{out}\n{guest.file('bluetoothd.log')[-3000:]}"
        yield guest
    finally:
        guest.stop()


def ours(link, tmp_path, *args):
    snoop = str(tmp_path / f"ours-{args[1]}-{len(list(tmp_path.glob('*.btsnoop')))}.btsnoop")
    process = Dongle(*args, "--transport", f"tcp:127.0.0.1:{link.ports[1]}", "--btsnoop", snoop,
                     "--log-level", "debug")
    process.snoop = snoop
    return process


def test_bluez_central_asks_our_peripheral(link, bluez, tmp_path):
    peripheral = ours(link, tmp_path, "--role", "peripheral", "--name", "Kiosk")
    try:
        peripheral.wait_for("info: advertising")
        # The guest's HCI traffic, to see what BlueZ's controller reports of the link.
        bluez.run("(btmon -w btmon.snoop > /dev/null 2>&1 &) ; sleep 0.5", timeout=30)
        code, out = bluez.run("/usr/bin/python3 bluez_central.py Kiosk 20 'Tell me'", timeout=240)
        assert code == 0, f"{out}\n--- bluetoothd\n{bluez.file('bluetoothd.log')[-4000:]}\n--- ours\n{peripheral.log[-3000:]}"
        result = json.loads(out.strip().splitlines()[-1])
        assert len(result["answers"]) == 20 and all(a in SLUGS for a in result["answers"]), result
        assert result["flags"] == {"question": ["write"], "answer": ["read", "notify"]}
        # BlueZ reports the ATT error of a refused write in its D-Bus error message.
        assert result["bad_write"].startswith("org.bluez.Error.Failed") and "0x0e" in result["bad_write"], result
        assert result["notifications_after_bad"] == 0
        assert result["read"] == result["answers"][-1]
        # Not checked: that our side sees BlueZ's Device1.Disconnect. The guest's 6.1
        # kernel answers the mgmt Disconnect with success but sends no HCI Disconnect
        # (btmon: an LE Create Connection Cancel instead), so the link stays up until
        # our peripheral stops and disconnects it (status 0, checked below).
        assert peripheral.count("info: answer to ") == 20
        # BlueZ subscribes to Service Changed with indications (0x0002).
        assert peripheral.count("subscribed to indications") >= 1, peripheral.log
        # The link our peripheral asked for (LinkTuning.swift), as BlueZ's controller
        # reported it to the kernel: LE Connection Update Complete at 30 ms.
        bluez.run("pkill btmon; sleep 0.3", timeout=30)
        updates = subprocess.run(["tshark", "-r", os.path.join(bluez.work, "btmon.snoop"), "-Y",
                                  "bthci_evt.le_meta_subevent == 0x03", "-T", "fields",
                                  "-e", "bthci_evt.status", "-e", "bthci_evt.le_con_interval"],
                                 capture_output=True, text=True, timeout=60)
        assert updates.returncode == 0, updates.stderr
        fields = [line.split("\t") for line in updates.stdout.splitlines() if line.strip()]
        assert fields and fields[-1][0] in ("0x00", "0") and int(fields[-1][1], 0) == 24, updates.stdout
    finally:
        peripheral.process.terminate()
        assert peripheral.process.wait(5) == 0, peripheral.log[-3000:]
        peripheral.stop()
    assert_every_command_succeeded(peripheral.snoop, tolerated=BUMBLE_OPTIONAL_REFUSALS)


def test_our_central_asks_a_bluez_gatt_server(link, bluez, tmp_path):
    bluez.check("(/usr/bin/python3 -u bluez_8ball.py BlueZ8 7 --mgmt-advertising > server.log 2>&1 &); sleep 0.2")
    try:
        bluez.wait_for_file_text("server.log", "READY", timeout=60)
        name = b"BlueZ8"
        data = bytes([2, 1, 6, 17, 7]) + SERVICE_UUID_LE + bytes([len(name) + 1, 9]) + name
        bluez.check(f"btmgmt --index 0 add-adv -c -d {data.hex()} 1")

        asker = ours(link, tmp_path, "--role", "central", "--question", "Will it work?", "--count", "20", "--json")
        code = asker.process.wait(240)
        asker.stop()
        records = [json.loads(line) for _, line in asker.lines if line.startswith("{")]
        assert code == 0, f"{asker.log[-4000:]}\n--- server\n{bluez.file('server.log')[-2000:]}"
        assert len(records) == 20 and all(r["slug"] in SLUGS and r["peer"] == "BlueZ8" for r in records)
        assert bluez.file("server.log").count("-> SLUG-ANSWER-") == 20
        assert_every_command_succeeded(asker.snoop)

        refused = ours(link, tmp_path, "--role", "central", "--question", "Tell me", "--json")
        code = refused.process.wait(120)
        refused.stop()
        records = [json.loads(line) for _, line in refused.lines if line.startswith("{")]
        # BlueZ's D-Bus server can only fail a write with org.bluez.Error.Failed → 0x80:
        # an ATT error (exit 1), not "rephrase" (0x0E) and not a crash.
        assert code == 1, refused.log[-3000:]
        assert records[0]["error"] == "att_error" and "0x80" in records[0]["message"], records
        assert "refused b'Tell me'" in bluez.file("server.log")
        assert_every_command_succeeded(refused.snoop)

        # An error name BlueZ does not know becomes 0x0E: "please rephrase", exit 5.
        bluez.check("pkill -f bluez_8ball.py; sleep 0.5; (/usr/bin/python3 -u bluez_8ball.py BlueZ8 7"
                    " --mgmt-advertising --refuse-with org.itcb.Error.NotAQuestion > server2.log 2>&1 &); sleep 0.2")
        bluez.wait_for_file_text("server2.log", "READY", timeout=60)
        rephrase = ours(link, tmp_path, "--role", "central", "--question", "Is it?", "--question", "Tell me", "--json")
        code = rephrase.process.wait(120)
        rephrase.stop()
        records = [json.loads(line) for _, line in rephrase.lines if line.startswith("{")]
        assert code == 5, rephrase.log[-3000:]
        assert records[0]["slug"] in SLUGS and records[1]["error"] == "rejected", records
        assert_every_command_succeeded(rephrase.snoop)
    finally:
        bluez.run("btmgmt --index 0 rm-adv 1; pkill -f bluez_8ball.py; true")
