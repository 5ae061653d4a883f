"""Realtek firmware loading, proven against the real files of Debian's
firmware-realtek (scripts/firmware-files.sh fetches and extracts them under
.cache/) and an emulated Realtek ROM (Tests/PythonSupport/vendor_controller.py: the
Realtek personality of Tests/PythonSupport/personalities.py in front of a Bumble
controller, H4 over TCP).

Differential: Bumble's own Realtek driver (bumble.drivers.rtk, a stack nobody
here wrote) and itcb-dongle load the same file through the same emulation; the
HCI commands each sends up to the end of the download (Reset, Read Local
Version, Read ROM Version, Download ×n, Read ROM Version, Reset) must be
identical byte for byte. Then our peripheral answers 20 questions over the
patched controller, and a missing file is one line naming it and the package."""
import os
import subprocess
import sys

import pytest
from harness import (REPO, Dongle, VendorEmulation, realtek_download_phase, realtek_rom_version,
                     failed_set_up, run_peripheral_once, twenty_answers)

SUPPORT = os.path.join(REPO, "Tests", "PythonSupport")
REFERENCE = os.path.join(SUPPORT, "bumble_driver_reference.py")

# chip → firmware file (Bumble's and btrtl's names).
FILES = {"rtl8723b": "rtl8723b_fw.bin", "rtl8723d": "rtl8723d_fw.bin", "rtl8821c": "rtl8821c_fw.bin",
         "rtl8761bu": "rtl8761bu_fw.bin", "rtl8822b": "rtl8822b_fw.bin", "rtl8822c": "rtl8822cu_fw.bin",
         "rtl8852a": "rtl8852au_fw.bin", "rtl8852b": "rtl8852bu_fw.bin", "rtl8852c": "rtl8852cu_fw.bin"}


def Emulation(chip, rom_version, record):
    return VendorEmulation(chip, record, "--rom-version", str(rom_version))


def download_phase(commands):
    """H4 commands up to the Reset after the download, the H4 byte kept."""
    return [b"\x01" + c for c in realtek_download_phase([c[1:] for c in commands])]


def run_bumble(chip, firmware_dir, workdir):
    path = os.path.join(firmware_dir, "rtl_bt", FILES[chip])
    emulation = Emulation(chip, realtek_rom_version(path), os.path.join(workdir, f"bumble-{chip}.hex"))
    try:
        out = subprocess.run([sys.executable, REFERENCE, "rtk", str(emulation.ports[0])], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "BUMBLE_RTK_FIRMWARE_DIR": os.path.join(firmware_dir, "rtl_bt")})
        assert "DONE" in out.stdout, f"Bumble's rtk driver failed:\n{out.stdout}\n{out.stderr}"
        return emulation.commands()
    finally:
        emulation.stop()


def run_ours(chip, firmware_dir, workdir):
    path = os.path.join(firmware_dir, "rtl_bt", FILES[chip])
    emulation = Emulation(chip, realtek_rom_version(path), os.path.join(workdir, f"ours-{chip}.hex"))
    dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                    "--firmware-dir", firmware_dir)
    try:
        dongle.wait_for("info: advertising", timeout=30)
        assert dongle.count("firmware loaded") == 1, dongle.log
        return emulation.commands()
    finally:
        dongle.stop()
        emulation.stop()


# RTL8852C's patches are over 128 fragments: see test_realtek_index_wrap_differs_from_bumble_only.
@pytest.mark.parametrize("chip", [c for c in FILES if c != "rtl8852c"])
def test_realtek_differential_with_bumble_driver(chip, firmware_dir, workdir):
    theirs = download_phase(run_bumble(chip, firmware_dir, workdir))
    ours = download_phase(run_ours(chip, firmware_dir, workdir))
    assert len(ours) == len(theirs), f"{len(ours)} commands, Bumble sent {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"command {i} differs:\n ours   {a.hex()}\n Bumble {b.hex()}"
    opcodes = [p[1] | p[2] << 8 for p in ours]
    assert opcodes[:3] == [0x0C03, 0x1001, 0xFC6D] and opcodes[-2:] == [0xFC6D, 0x0C03]
    assert set(opcodes[3:-2]) == {0xFC20} and ours[-3][4] & 0x80


def test_realtek_index_wrap_differs_from_bumble_only(firmware_dir, workdir):
    """Past 128 fragments Linux btrtl numbers them (i & 0x7F) + 1 (the fix for
    patches over 32 KB); Bumble's driver sends i & 0x7F. We follow Linux: that
    index byte is the only difference."""
    theirs = download_phase(run_bumble("rtl8852c", firmware_dir, workdir))
    ours = download_phase(run_ours("rtl8852c", firmware_dir, workdir))
    assert len(ours) == len(theirs)
    fragments = [(a, b) for a, b in zip(ours, theirs) if a[1:3] == b"\x20\xfc"]
    assert len(fragments) > 128
    for i, (a, b) in enumerate(fragments):
        assert a[:4] + a[5:] == b[:4] + b[5:]
        want = ((i & 0x7F) + 1 if i > 0x7F else i) | (0x80 if i == len(fragments) - 1 else 0)
        assert a[4] == want
        assert b[4] == (i & 0x7F) | (0x80 if i == len(fragments) - 1 else 0)
    others = [(a, b) for a, b in zip(ours, theirs) if a[1:3] != b"\x20\xfc"]
    assert all(a == b for a, b in others)


def test_realtek_answers_20_questions(firmware_dir, workdir):
    emulation = Emulation("rtl8761bu", 1, os.path.join(workdir, "20q.hex"))
    dongle = Dongle("--role", "peripheral", "--name", "RtkBall", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                    "--firmware-dir", firmware_dir)
    try:
        dongle.wait_for("info: advertising", timeout=30)

        twenty_answers(emulation.ports[1], "RtkBall", "Realtek question")
        assert dongle.count("Realtek RTL8761B/BU: firmware loaded") == 1
    finally:
        dongle.stop()
        emulation.stop()


def test_realtek_missing_firmware_exit_4(workdir):
    os.makedirs(os.path.join(workdir, "rtl_bt"))
    error = failed_set_up(Emulation("rtl8761bu", 1, os.path.join(workdir, "missing.hex")), workdir)
    assert f"{workdir}/rtl_bt/rtl8761bu_fw.bin" in error and "firmware-realtek" in error and "non-free-firmware" in error


def test_realtek_corrupt_firmware_exit_4(firmware_dir, workdir):
    os.makedirs(os.path.join(workdir, "rtl_bt"))
    with open(os.path.join(firmware_dir, "rtl_bt", "rtl8761bu_fw.bin"), "rb") as f:
        data = f.read()
    with open(os.path.join(workdir, "rtl_bt", "rtl8761bu_fw.bin"), "wb") as f:
        f.write(data[:len(data) // 2])  # truncated: the extension signature is gone
    emulation = Emulation("rtl8761bu", 1, os.path.join(workdir, "corrupt.hex"))
    try:
        out = run_peripheral_once(emulation.ports[0], workdir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    assert "firmware download failed: extension signature missing" in out.stderr
    assert not any(c[1:3] == b"\x20\xfc" for c in emulation.commands())


def test_realtek_warm_start_skips_download(firmware_dir, workdir):
    """A controller already running its patch reports another LMP subversion:
    the next start resets it, reads the version and downloads nothing."""
    emulation = Emulation("rtl8761bu", 1, os.path.join(workdir, "warm.hex"))
    args = ("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}", "--firmware-dir", firmware_dir)
    try:
        first = Dongle(*args)
        first.wait_for("info: advertising", timeout=30)
        first.stop()
        downloads = sum(1 for c in emulation.commands() if c[1:3] == b"\x20\xfc")
        second = Dongle(*args)
        try:
            second.wait_for("info: advertising", timeout=30)
            assert second.count("firmware loaded") == 0 and second.count("loading") == 0, second.log
        finally:
            second.stop()
        assert sum(1 for c in emulation.commands() if c[1:3] == b"\x20\xfc") == downloads > 0
    finally:
        emulation.stop()
