"""Broadcom/Cypress patchram, proven against the real .hcd files of Debian's
bluez-firmware (the Raspberry Pi radios BCM43430A1, BCM43430B0, BCM4345C0,
BCM4345C5; scripts/firmware-files.sh fetches and extracts them under .cache/)
and an emulated Broadcom ROM (Tests/Support/personalities.py, class Broadcom,
in front of a Bumble controller, H4 over TCP): every record is compared with
the file byte for byte, a command during the chip's restart after Launch RAM
is an error, and the ROM reports its model's default address.

The command sequence is the one Linux btbcm.c sends (facts, not code): Reset,
Read Local Version, Download Minidriver (0xFC2E), the file's records in order,
a pause for the restart, Reset, Read Local Version, Read BD_ADDR. BTstack's
chipset/bcm sends the same download (Download Minidriver, the records) and
waits for the restart too. Linux also reads the verbose config (0xFC79),
the controller features (0xFC6E) and the local name before the download: for
its log only, left out here.

BCM20702 (USB dongles): no .hcd for it may be redistributed, so the test
writes one in the same record format."""
import os
import struct

import pytest
from harness import Dongle, VendorEmulation, run_peripheral_once, twenty_answers

CHIPS = {"bcm43430a1": ("Broadcom BCM43430A1", "BCM43430A1.hcd", "AA:AA:AA:AA:AA:AA"),
         "bcm43430b0": ("Broadcom BCM43430B0", "BCM43430B0.hcd", None),
         "bcm4345c0": ("Broadcom BCM4345C0", "BCM4345C0.hcd", None),
         "bcm4345c5": ("Cypress BCM4345C5", "BCM4345C5.hcd", "43:45:C5:00:1F:AC")}


def records(path):
    """The .hcd file's records as H4 commands."""
    data = open(path, "rb").read()
    out, at = [], 0
    while at < len(data):
        length = data[at + 2]
        out.append(b"\x01" + data[at:at + 3 + length])
        at += 3 + length
    return out


def command(opcode, params=b""):
    return b"\x01" + struct.pack("<HB", opcode, len(params)) + params


def expected_setup(path):
    """btbcm.c's set-up for a UART chip, without its informational reads."""
    return [command(0x0C03), command(0x1001), command(0xFC2E), *records(path),
            command(0x0C03), command(0x1001), command(0x1009)]


def run_ours(chip, firmware_dir, workdir, *extra):
    emulation = VendorEmulation(chip, os.path.join(workdir, f"{chip}.hex"), "--firmware-dir", firmware_dir)
    dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                    "--firmware-dir", firmware_dir, *extra)
    return emulation, dongle


@pytest.mark.parametrize("chip", sorted(CHIPS))
def test_broadcom_patchram_as_btbcm_sends_it(chip, firmware_dir, workdir):
    label, name, address = CHIPS[chip]
    path = os.path.join(firmware_dir, "brcm", name)
    emulation, dongle = run_ours(chip, firmware_dir, workdir)
    try:
        dongle.wait_for("info: advertising", timeout=60)
        commands = emulation.commands()
        assert emulation.errors() == []
        want = expected_setup(path)
        assert commands[:len(want)] == want, [c[:8].hex() for c in commands[:8]]
        # Then the host's own bring-up, from its own Reset.
        assert commands[len(want)] == command(0x0C03)
        assert dongle.count(f"{label}: loading {path}") == 1, dongle.log
        assert dongle.count(f"{label}: patchram loaded ({len(records(path))} records, build 256 -> 291)") == 1, dongle.log
        if address:
            line = [l for _, l in dongle.lines if "is a default every unit of the model shares" in l]
            assert len(line) == 1 and address in line[0] and "static random address" in line[0], dongle.log
    finally:
        dongle.stop()
        emulation.stop()


def test_broadcom_answers_20_questions(firmware_dir, workdir):
    emulation = VendorEmulation("bcm43430a1", os.path.join(workdir, "20q.hex"), "--firmware-dir", firmware_dir)
    dongle = Dongle("--role", "peripheral", "--name", "PiBall", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                    "--firmware-dir", firmware_dir)
    try:
        dongle.wait_for("info: advertising", timeout=60)
        twenty_answers(emulation.ports[1], "PiBall", "Broadcom question")
        assert emulation.errors() == []
        # Advertised from the static random address, not the default every BCM43430A1 shares.
        assert "AA:AA:AA:AA:AA:AA" not in dongle.log.split("instead")[-1]
    finally:
        dongle.stop()
        emulation.stop()


def test_broadcom_missing_hcd_exit_4(workdir):
    os.makedirs(os.path.join(workdir, "brcm"))
    emulation = VendorEmulation("bcm43430a1", os.path.join(workdir, "missing.hex"))
    try:
        out = run_peripheral_once(emulation.ports[0], workdir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    errors = [l for l in out.stderr.splitlines() if "error" in l]
    assert len(errors) == 1, out.stderr
    assert f"{workdir}/brcm/BCM43430A1.hcd" in errors[0] and "bluez-firmware" in errors[0], errors[0]


@pytest.mark.parametrize("damage", ["truncated", "empty", "bad-length"])
def test_broadcom_corrupt_hcd_exit_4(damage, firmware_dir, workdir):
    data = open(os.path.join(firmware_dir, "brcm", "BCM43430A1.hcd"), "rb").read()
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "empty":
        data = b""
    else:
        data = data[:2] + b"\xff" + data[3:300]
    os.makedirs(os.path.join(workdir, "brcm"))
    with open(os.path.join(workdir, "brcm", "BCM43430A1.hcd"), "wb") as f:
        f.write(data)
    emulation = VendorEmulation("bcm43430a1", os.path.join(workdir, "corrupt.hex"))
    try:
        out = run_peripheral_once(emulation.ports[0], workdir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    errors = [l for l in out.stderr.splitlines() if "error" in l]
    assert len(errors) == 1 and "Broadcom BCM43430A1: patchram download failed: patchram file" in errors[0], out.stderr
    assert not any(c[1:3] == b"\x2e\xfc" for c in emulation.commands()), "nothing is sent from a bad file"


def test_broadcom_bcm20702_with_a_written_hcd(workdir):
    """A BCM20702A1 (the USB dongles' chip, here over TCP) with a .hcd the test writes."""
    os.makedirs(os.path.join(workdir, "brcm"))
    path = os.path.join(workdir, "brcm", "BCM20702A1.hcd")
    with open(path, "wb") as f:
        for i in range(40):
            body = struct.pack("<I", 0x00210000 + 240 * i) + bytes((i * 7 + j) & 0xFF for j in range(240))
            f.write(struct.pack("<HB", 0xFC4C, len(body)) + body)
        f.write(struct.pack("<HB", 0xFC4E, 4) + b"\xff\xff\xff\xff")
    emulation, dongle = run_ours("bcm20702a1", workdir, workdir)
    try:
        dongle.wait_for("info: advertising", timeout=60)
        assert emulation.errors() == []
        want = expected_setup(path)
        assert emulation.commands()[:len(want)] == want
        assert dongle.count("Broadcom BCM20702A1: patchram loaded (41 records") == 1, dongle.log
        assert dongle.count("20:70:02:A0:00:00 is a default every unit of the model shares") == 1, dongle.log
    finally:
        dongle.stop()
        emulation.stop()
