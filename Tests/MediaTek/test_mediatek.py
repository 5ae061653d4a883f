"""MediaTek MT7921, MT7922 and MT7925 RAM code download, proven against the
real files of Debian 13's firmware-mediatek (scripts/firmware-files.sh fetches
and extracts them under .cache/) and an emulated MediaTek chip
(Tests/PythonSupport/personalities.py, class MediaTek, in front of a Bumble
controller, H4 over TCP): each section's status query is compared with the
file's section map and each chunk with the file's bytes, in order.

The sequence is the one Linux btmtk.c sends for these chips (facts, not code):
read the chip id (0x80000008, then 0x70010200), the firmware version
(0x80021004) and the flavour (0x70010020); for each section with bytes to
load, WMT patch download flag 0 with the section map's 52 bytes, then the
section in 250-byte WMT commands, flags 1, 2 ... 3; about 100 ms; the endpoint
reset option register 0x74011890 = 0x00010001; WMT function control 1. Linux
reads the registers through USB vendor requests; over H4 (this suite) they are
WMT register commands (operation 8), the form this program gives them there.
Linux also resets the chip's Bluetooth subsystem before every download; this
program leaves a warm chip (its RAM code running) alone, and keeps the reset
for a chip that stops answering."""
import os
import struct
import subprocess

import pytest
from harness import BINARY, Dongle, VendorEmulation, failed_set_up, twenty_answers

CHIPS = {"mt7921": ("MediaTek MT7921", "BT_RAM_CODE_MT7961_1_2_hdr.bin"),
         "mt7921a": ("MediaTek MT7921", "BT_RAM_CODE_MT7961_1a_2_hdr.bin"),
         "mt7922": ("MediaTek MT7922", "BT_RAM_CODE_MT7922_1_1_hdr.bin"),
         "mt7925": ("MediaTek MT7925", "mt7925/BT_RAM_CODE_MT7925_1_1_hdr.bin")}


def command(opcode, params=b""):
    return b"\x01" + struct.pack("<HB", opcode, len(params)) + params


def wmt(operation, flag, data=b""):
    return command(0xFC6F, bytes([1, operation]) + struct.pack("<H", len(data) + 1) + bytes([flag]) + data)


def register_read(address):
    return wmt(0x08, 0, b"\x02" + struct.pack("<I", address))


def expected_setup(path, warm=False):
    """btmtk.c's set-up (the registers as WMT register commands), after the probe's Reset and Read Local Version."""
    data = open(path, "rb").read()
    out = [command(0x0C03), command(0x1001)]
    out += [register_read(a) for a in (0x80000008, 0x70010200, 0x80021004, 0x70010020)]
    chunks = 0
    for i in range(struct.unpack_from("<I", data, 44)[0]):
        at = 96 + 64 * i
        offset, load = struct.unpack_from("<I", data, at + 4)[0], struct.unpack_from("<I", data, at + 16)[0]
        if not load:
            continue
        out.append(wmt(0x01, 0, b"\x00" + data[at + 12:at + 64]))
        if warm:
            continue
        section = data[offset:offset + load]
        for start in range(0, load, 250):
            flag = 1 if start == 0 else (3 if start + 250 >= load else 2)
            out.append(wmt(0x01, flag, section[start:start + 250]))
            chunks += 1
    out.append(wmt(0x08, 1, b"\x01" + struct.pack("<II", 0x74011890, 0x00010001)))
    out.append(wmt(0x06, 0, b"\x01"))
    return out, chunks


def run_ours(chip, firmware_dir, workdir, *options, ours=()):
    emulation = VendorEmulation(chip, os.path.join(workdir, f"{chip}.hex"), "--firmware-dir", firmware_dir, *options)
    dongle = Dongle("--role", "peripheral", "--name", "MtkBall", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                    "--firmware-dir", firmware_dir, *ours)
    return emulation, dongle


@pytest.mark.parametrize("chip", sorted(CHIPS))
def test_mediatek_ram_code_as_btmtk_sends_it(chip, firmware_dir, workdir):
    label, name = CHIPS[chip]
    path = os.path.join(firmware_dir, "mediatek", name)
    emulation, dongle = run_ours(chip, firmware_dir, workdir)
    try:
        dongle.wait_for("info: advertising", timeout=120)
        commands = emulation.commands()
        assert emulation.errors() == []
        want, chunks = expected_setup(path)
        assert commands[:len(want)] == want, [c[:10].hex() for c in commands[:8]]
        # Then the host's own bring-up, from its own Reset.
        assert commands[len(want)] == command(0x0C03)
        assert dongle.count(f"{label}: loading {path}") == 1, dongle.log
        sections = sum(1 for c in want if c[4:6] == b"\x01\x01" and c[8] == 0)
        total = struct.unpack_from("<I", open(path, "rb").read(), 44)[0]
        assert dongle.count(f"{label}: RAM code loaded ({sections} of {total} sections, {chunks} WMT commands); "
                            "Bluetooth on") == 1, dongle.log
        # SIGTERM: the host's stop (its HCI Reset), then Bluetooth off as Linux's
        # btmtk_usb_shutdown turns it off at close (WMT function control 0), last.
        dongle.stop()
        assert dongle.process.returncode == 0, dongle.log
        commands = emulation.commands()
        assert commands[-2:] == [command(0x0C03), wmt(0x06, 0, b"\x00")], [c[:10].hex() for c in commands[-3:]]
        assert emulation.errors() == []
    finally:
        dongle.stop()
        emulation.stop()


def test_mediatek_section_status_3_is_downloaded(firmware_dir, workdir):
    """btmtk.c (btmtk_usb_hci_wmt_sync) maps a section status other than 1 and 2 to
    "undone" and btmtk_setup_firmware_79xx downloads it: a status of 3 is not an error."""
    emulation, dongle = run_ours("mt7921", firmware_dir, workdir, "--fault", "status-3")
    try:
        dongle.wait_for("info: advertising", timeout=120)
        assert emulation.errors() == []
        path = os.path.join(firmware_dir, "mediatek", CHIPS["mt7921"][1])
        want, _ = expected_setup(path)
        assert emulation.commands()[:len(want)] == want
        assert dongle.count("MediaTek MT7921: RAM code loaded") == 1, dongle.log
    finally:
        dongle.stop()
        emulation.stop()


def test_mediatek_answers_20_questions(firmware_dir, workdir):
    metrics = os.path.join(workdir, "metrics.prom")
    emulation, dongle = run_ours("mt7922", firmware_dir, workdir, ours=("--metrics-file", metrics))
    try:
        dongle.wait_for("info: advertising", timeout=120)
        twenty_answers(emulation.ports[1], "MtkBall", "MediaTek question")
        assert emulation.errors() == []
    finally:
        dongle.stop()
        emulation.stop()
    # The metrics name the vendor whose firmware was loaded, lowercased.
    loaded = [line for line in open(metrics).read().splitlines() if line.startswith("itcb_dongle_firmware_loaded{")]
    assert len(loaded) == 1 and loaded[0].endswith(',vendor="mediatek"} 1'), loaded


def test_mediatek_controller_info_names_chip_file_and_package(firmware_dir, workdir):
    """--controller-info after the download: the chip, the file and the Debian package that ships it."""
    emulation = VendorEmulation("mt7922", os.path.join(workdir, "info.hex"), "--firmware-dir", firmware_dir)
    try:
        out = subprocess.run([BINARY, "--controller-info", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                              "--firmware-dir", firmware_dir], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        chipset = [line for line in out.stdout.splitlines() if line.startswith("Chipset:")]
        path = os.path.join(firmware_dir, "mediatek", CHIPS["mt7922"][1])
        assert chipset == [f"Chipset:        MediaTek MT7922, {path} (Debian package firmware-mediatek"
                           " (component non-free-firmware))"], out.stdout
    finally:
        emulation.stop()


def test_mediatek_warm_chip_keeps_its_ram_code(firmware_dir, workdir):
    emulation, dongle = run_ours("mt7925", firmware_dir, workdir, "--warm")
    try:
        dongle.wait_for("info: advertising", timeout=60)
        want, _ = expected_setup(os.path.join(firmware_dir, "mediatek", CHIPS["mt7925"][1]), warm=True)
        commands = emulation.commands()
        assert commands[:len(want)] == want, [c[:10].hex() for c in commands[:12]]
        assert emulation.errors() == []
        assert dongle.count("RAM code loaded") == 0, dongle.log
    finally:
        dongle.stop()
        emulation.stop()


def failed_start(firmware_dir, *options):
    """An MT7921 with the files under `firmware_dir`: exit 4 and its one error line, and the commands sent."""
    emulation = VendorEmulation("mt7921", os.path.join(firmware_dir, "failed.hex"), "--firmware-dir", firmware_dir,
                                *options)
    return failed_set_up(emulation, firmware_dir), emulation.commands()


def test_mediatek_missing_file_exit_4(workdir):
    os.makedirs(os.path.join(workdir, "mediatek"))
    error, _ = failed_start(workdir)
    assert f"{workdir}/mediatek/BT_RAM_CODE_MT7961_1_2_hdr.bin" in error and "firmware-mediatek" in error, error


@pytest.mark.parametrize("damage", ["truncated", "foreign", "empty"])
def test_mediatek_corrupt_file_exit_4(damage, firmware_dir, workdir):
    data = open(os.path.join(firmware_dir, "mediatek", CHIPS["mt7921"][1]), "rb").read()
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "foreign":
        data = data[:16] + b"XXXX" + data[20:]
    else:
        data = b""
    os.makedirs(os.path.join(workdir, "mediatek"))
    with open(os.path.join(workdir, "mediatek", CHIPS["mt7921"][1]), "wb") as f:
        f.write(data)
    error, commands = failed_start(workdir)
    assert "MediaTek MT7921: RAM code download failed: " in error and CHIPS["mt7921"][1] in error, error
    assert not any(c[1:3] == b"\x6f\xfc" and c[5] == 0x01 for c in commands), "nothing is sent from a bad file"


@pytest.mark.parametrize("fault, why", [("wrong-op", "controller answered another WMT operation"),
                                        ("short", "controller's WMT answer cut short"),
                                        ("register", "controller refused a register read or write")])
def test_mediatek_malformed_answers_exit_4(fault, why, firmware_dir, workdir):
    for name in ("BT_RAM_CODE_MT7961_1_2_hdr.bin",):
        os.makedirs(os.path.join(workdir, "mediatek"), exist_ok=True)
        os.symlink(os.path.join(firmware_dir, "mediatek", name), os.path.join(workdir, "mediatek", name))
    error, _ = failed_start(workdir, "--fault", fault)
    # A chip whose every register read is refused is not named yet.
    label = "MediaTek MT79xx" if fault == "register" else "MediaTek MT7921"
    assert f"{label}: RAM code download failed: {why}" in error, error


def test_mediatek_silent_chip_exit_4(firmware_dir, workdir):
    """No answer to a section's status query: one line after the 5 s answer timeout, never a hang."""
    os.makedirs(os.path.join(workdir, "mediatek"))
    name = CHIPS["mt7921"][1]
    os.symlink(os.path.join(firmware_dir, "mediatek", name), os.path.join(workdir, "mediatek", name))
    error, _ = failed_start(workdir, "--fault", "silent")
    assert "did not answer during the MediaTek RAM code download" in error, error


# ---------------------------------------------------------------- the emulated chip's reset
#
# The reset runs over USB only (the register requests; test_vendor.py drives it
# through our binary in the QEMU guest). Here, the emulated chip itself: a
# wedged chip comes back from btmtk.c's sequence and from nothing less, so the
# guest test cannot pass on a wrong one.

def drive_reset(chip, steps):
    """Wedges the emulated chip, runs `steps` (("read", address), ("write",
    address, value or function of the last value read), ("pause", seconds))
    through its UHW register requests; returns it."""
    import time

    import personalities
    p = personalities.make(chip, None, warm=True)
    p.wedge()
    assert p.on_command(command(0x0C03)[1:]) == [], "a wedged chip answers nothing"
    last = 0
    for step in steps:
        if step[0] == "pause":
            time.sleep(step[1])
        elif step[0] == "read":
            last = p.read_register(1, step[1])
        else:
            p.write_register(1, step[1], step[2](last) if callable(step[2]) else step[2])
    return p


def kernel_reset(chip):
    """btmtk_usb_subsys_reset's steps for the chip, with the MT7921's 20 ms between its reset bit's writes."""
    import personalities
    steps = personalities.mediatek_reset_sequence(personalities.MEDIATEK_CHIPS[chip][0])
    at = steps.index(("write", personalities.MTK_SUBSYS_RST, 0)) if chip == "mt7921" else None
    return steps if at is None else steps[:at] + [("pause", 0.025)] + steps[at:]


@pytest.mark.parametrize("chip", ["mt7921", "mt7922", "mt7925"])
def test_emulated_chip_comes_back_only_from_btmtk_reset(chip):
    import personalities as mtk
    p = drive_reset(chip, kernel_reset(chip))
    assert p.errors == [] and p.resets == 1 and not p.wedged
    assert not p.loaded, "cold after its reset: the RAM code must come again"
    assert p.registers[mtk.MTK_MISC] & mtk.MTK_RST_DONE
    assert p.on_command(command(0x0C03)[1:]) == [("event", bytes.fromhex("0e0401030c00"))]

    # Plausible mistakes: each leaves it wedged, with the operation that differs named.
    right = kernel_reset(chip)
    writes = [i for i, step in enumerate(right) if step[0] == "write"]
    mistakes = {
        "a step left out": right[:1] + right[2:],
        "two steps swapped": right[:writes[0]] + [right[writes[0] + 1], right[writes[0]]] + right[writes[0] + 2:],
        "the last write missing": right[:writes[-1]] + right[writes[-1] + 1:],
    }
    if chip == "mt7922":
        mistakes["the reset bits written without the value read"] = [
            ("write", step[1], 0x2020) if step[0] == "write" and callable(step[2]) else step for step in right]
    if chip == "mt7925":
        mistakes["bits 8-15 kept"] = [("write", s[1], lambda last: last | 1 << 13) if i == 3 else s
                                      for i, s in enumerate(right)]
    if chip == "mt7921":
        mistakes["no 20 ms between the reset bit's writes"] = [s for s in right if s[0] != "pause"]
    for what, steps in mistakes.items():
        p = drive_reset(chip, steps)
        assert p.wedged and p.resets == 0, what
        # Cut short, the sequence is unfinished rather than wrong (on the MT7922 the last write is the last step).
        assert (p.errors or steps == right[:len(steps)]) and all("still wedged" in e for e in p.errors), (what, p.errors)
        assert not p.registers[mtk.MTK_MISC] & mtk.MTK_RST_DONE, what
        assert p.on_command(command(0x0C03)[1:]) == [], what
