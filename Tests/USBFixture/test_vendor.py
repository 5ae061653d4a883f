"""Realtek, Intel and Broadcom dongles on the QEMU USB fixture (Debian 12's 6.1
kernel; MediaTek is test_mediatek.py, on Debian 13's): the emulated dongle takes a
vendor personality (Tests/PythonSupport/personalities.py: the chip's VID:PID, its ROM
or bootloader and its replies; it checks what it receives against the real
firmware file), and the guest's btusb with btrtl/btintel/btbcm binds it first, as
on a real machine.

- Intel, one chip of each generation (the legacy AX201, the TLV AX210): Linux's
  btintel loads the real file through the emulated dongle; the dongle is
  power-cycled, Linux is kept away (no file in its firmware folder) and our
  binary loads the same file. The loading commands (every Secure Send, the
  Intel Reset, the DDC writes, in order) must be identical byte for byte, and
  Linux's must follow the file; then questions through the chip. The other
  chips (8265, 9560, AX200, AX211): Linux and we ask the same chip for the same
  file (no download: each chip's whole load is checked over TCP in Tests/Intel,
  against the file and Linux's order).
- Realtek RTL8761BU and RTL8852B: Linux's btrtl loads the real files through the
  emulated ROM first, then we do: the download fragments are the same but for
  the last one's zero padding. The RTL8761BU over USB answers questions, and its
  download is the one Bumble's rtk driver sends over H4 with the same personality.
- Broadcom BCM20702 (0a5c:21e8, vendor class FF/01/01 as sold): Linux's btbcm
  loads a .hcd the test writes (none may be redistributed), then our binary
  (--transport usb) after a power cycle: the same records, in order, as the
  file; then questions. Without the file: a warning, the ROM answers.

One guest for the module; each test plugs in the dongle it needs (switch_dongle).
Firmware: scripts/firmware-files.sh (Debian's firmware-realtek and firmware-iwlwifi);
the guest sees it in /mnt/work/fw (the personality and our binary) and, when a
test wants Linux to load, in /mnt/work/linuxfw (the kernel's firmware path)."""
import os
import shutil
import struct
import subprocess
import sys
import time

import personalities
import pytest
from fixture import Guest
from harness import REPO, VendorEmulation, realtek_download_phase, realtek_rom_version
from vendor_guest import (GUEST_FW, QUESTIONS, ask, clear_record, linux_firmware, no_personality_errors, opcode,
                          plug_personality, power_cycle, recorded, settled, start, stop, wait_advertising, wait_kernel)

INTEL = {  # personality → firmware file stem (Linux btintel's and Bumble's names)
    "8265": "ibt-12-16", "9560": "ibt-17-16-1", "ax201": "ibt-19-0-4", "ax200": "ibt-20-1-3",
    "ax210": "ibt-0041-0041", "ax211": "ibt-0040-0041",
}
LEGACY = ("8265", "9560", "ax200", "ax201")
REALTEK = {"rtl8761bu": "rtl8761bu_fw.bin", "rtl8852b": "rtl8852bu_fw.bin"}
REALTEK_CONFIG = {"rtl8761bu": "rtl8761bu_config.bin", "rtl8852b": "rtl8852bu_config.bin"}  # Bumble and we load it when present
# Advertised names: short enough for the advertising packet (Bumble's link carries no scan responses).
NAMES = {"8265": "Int8265", "9560": "Int9560", "ax200": "IntAX200", "ax201": "IntAX201", "ax210": "IntAX210",
         "ax211": "IntAX211", "rtl8761bu": "Rtk8761", "rtl8852b": "Rtk8852"}
SECURE_SEND, INTEL_RESET, WRITE_DDC, READ_VERSION, READ_BOOT_PARAMS, SET_EVENT_MASK = \
    0xFC09, 0xFC01, 0xFC8B, 0xFC05, 0xFC0D, 0xFC52
LOADING = (SECURE_SEND, INTEL_RESET, WRITE_DDC)
REFERENCE = os.path.join(REPO, "Tests", "PythonSupport", "bumble_driver_reference.py")


@pytest.fixture(scope="module")
def firmware(firmware_dir):
    return firmware_dir


def firmware_files():
    """Paths (relative to the firmware folder) the personalities load."""
    files = [f"rtl_bt/{name}" for name in [*REALTEK.values(), *REALTEK_CONFIG.values()]]
    for stem in INTEL.values():
        files += [f"intel/{stem}.sfi", f"intel/{stem}.ddc"]
    return files


@pytest.fixture(scope="module")
def vguest(link, firmware):
    g = Guest(link.ports[0])
    try:
        for name in firmware_files():
            os.makedirs(os.path.dirname(os.path.join(g.work, "fw", name)), exist_ok=True)
            shutil.copy(os.path.join(firmware, name), os.path.join(g.work, "fw", name))
        yield g
    finally:
        g.stop()


# btintel's words when a load went wrong: no need to wait any longer.
LINUX_GAVE_UP = ("Device boot timeout", "Firmware loading timeout", "Firmware loading failed", "Intel reset sent to retry",
                 "Failed to send firmware data", "Reading Intel", "Unsupported Intel", "Failed to load Intel firmware")


def wait_command(guest, wanted, label, timeout=120):
    """Waits for the command in the record (Linux's set-up reaching it); fails as
    soon as the kernel log since `label` says btintel gave up."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        commands = recorded(guest)
        if any(opcode(c) == wanted for c, _ in commands):
            return commands
        kernel = guest.check(f"dmesg_since {label}")
        if any(text in kernel for text in LINUX_GAVE_UP):
            time.sleep(1)
            raise AssertionError(f"btintel gave up before command 0x{wanted:04x}:\n{guest.check(f'dmesg_since {label}')}"
                                 f"\n--- emulated chip's errors\n{guest.file('vendor-errors.txt')}")
        time.sleep(0.5)
    raise AssertionError(f"no command 0x{wanted:04x} within {timeout} s; {len(recorded(guest))} commands;\n"
                         f"{guest.file('gadget.log')[-3000:]}")


# ---------------------------------------------------------------- what a correct Intel load is

def intel_expected(firmware, chip):
    """The loading commands the file implies (Secure Sends, Intel Reset, DDC writes),
    as [(opcode, parameters)]. Legacy bootloaders: RSA, payload at 644; TLV ones:
    the secure boot engine the chip reports (RSA or ECDSA), payload at 964.
    The Intel Reset's boot address is the file's Write Boot Params (0xFC0E) one,
    except for SfP/WsP (hw_variant 0x0b/0x0c: the 8265): Linux reads it only
    while checking the file's version, which it skips for those, and sends 0."""
    with open(os.path.join(firmware, "intel", INTEL[chip] + ".sfi"), "rb") as f:
        sfi = f.read()
    ecdsa = chip in personalities.INTEL_TLV_CHIPS and personalities.INTEL_TLV_CHIPS[chip]["engine"] == personalities.ECDSA
    if ecdsa:
        sections = [(0x00, sfi[644:772]), (0x03, sfi[772:868]), (0x02, sfi[868:964])]
    else:
        sections = [(0x00, sfi[0:128]), (0x03, sfi[128:384]), (0x02, sfi[388:644])]
    payload_at = 644 if chip in LEGACY else 964
    commands = []
    for kind, data in sections:
        commands += [(SECURE_SEND, bytes([kind]) + data[i:i + 252]) for i in range(0, len(data), 252)]
    boot_address = None
    offset, start = payload_at, payload_at
    while offset < len(sfi):
        code, length = struct.unpack_from("<HB", sfi, offset)
        if code == 0xFC0E:
            boot_address = sfi[offset + 3:offset + 7]
        offset += 3 + length
        if (offset - start) % 4 == 0:
            chunk = sfi[start:offset]
            commands += [(SECURE_SEND, b"\x01" + chunk[i:i + 252]) for i in range(0, len(chunk), 252)]
            start = offset
    assert start == len(sfi) and boot_address is not None
    if chip in personalities.INTEL_LEGACY_CHIPS and personalities.INTEL_LEGACY_CHIPS[chip]["variant"] in (0x0B, 0x0C):
        boot_address = bytes(4)
    commands.append((INTEL_RESET, bytes([0x00, 0x01, 0x00, 0x01]) + boot_address))
    ddc_path = os.path.join(firmware, "intel", INTEL[chip] + ".ddc")
    if os.path.exists(ddc_path):
        with open(ddc_path, "rb") as f:
            ddc = f.read()
        i = 0
        while i < len(ddc):
            commands.append((WRITE_DDC, ddc[i:i + 1 + ddc[i]]))
            i += 1 + ddc[i]
    return commands


def loading(commands):
    return [(c, bulk) for c, bulk in commands if opcode(c) in LOADING]


def as_pairs(commands):
    return [(opcode(c), c[3:3 + c[2]]) for c, _ in commands]


def assert_same(ours, theirs, who):
    assert len(ours) == len(theirs), f"{len(ours)} loading commands, {who} sent {len(theirs)}"
    for i, ((a, _), (b, _)) in enumerate(zip(ours, theirs)):
        assert a == b, f"loading command {i} differs:\n ours {a[:40].hex()}…\n {who} {b[:40].hex()}…"


# ---------------------------------------------------------------- Intel: Linux btintel as the reference

# One chip of each generation downloads under Linux and under us (the legacy
# AX201, the TLV AX210): the protocol is the same within a generation, and each
# download takes a minute or more in the TCG guest (about 2,800 Secure Sends).
@pytest.mark.parametrize("chip", ["ax201", "ax210"])
def test_intel_linux_reference(chip, vguest, link, firmware):
    stem = INTEL[chip]
    legacy = chip in LEGACY
    started = time.time()
    # 1. Linux (btusb → btintel) loads the file through the emulated bootloader.
    linux_firmware(vguest, firmware, [f"intel/{stem}.sfi", f"intel/{stem}.ddc"])
    plug_personality(vguest, chip, f"linux-{chip}")
    wait_command(vguest, INTEL_RESET, f"linux-{chip}", timeout=300)  # the download done (or btintel gave up)
    kernel = wait_kernel(vguest, f"linux-{chip}", "Device booted in", timeout=30)
    theirs = settled(vguest)  # and the set-up after the boot (the DDC records, the event mask)
    no_personality_errors(vguest)
    assert f"Found device firmware: intel/{stem}.sfi" in kernel and "Firmware loaded in" in kernel, kernel
    linux_seconds = time.time() - started

    # Linux's sequence is the protocol: versions, (legacy) boot parameters, the file, the reset, the DDC records.
    codes = [opcode(c) for c, _ in theirs]
    print(f"\n{chip} Linux: " + " ".join(f"{c:04x}" for c in codes if c != SECURE_SEND))
    first = codes.index(SECURE_SEND)
    assert codes[:first] == ([READ_VERSION, READ_BOOT_PARAMS] if legacy else [READ_VERSION]), [hex(c) for c in codes[:first]]
    assert theirs[0][0][2:] == b"\x01\xff" and (not legacy or theirs[1][0][2:] == b"\x00")
    assert as_pairs(loading(theirs)) == intel_expected(firmware, chip), \
        "Linux's loading commands do not follow the file"
    assert all(bulk for c, bulk in theirs if opcode(c) == SECURE_SEND), "Linux sent Secure Send on EP0"
    after = codes[codes.index(INTEL_RESET) + 1:]
    assert READ_VERSION in after and SET_EVENT_MASK in after, [hex(c) for c in after]

    # 2. Power cycle (back to the bootloader); Linux finds no file and stops before any download.
    linux_firmware(vguest, firmware)
    power_cycle(vguest, f"cold-{chip}")
    wait_kernel(vguest, f"cold-{chip}", f"Failed to load Intel firmware file intel/{stem}.sfi", timeout=60)
    time.sleep(0.5)
    assert not loading(recorded(vguest))
    # --list-controllers names the family and whether the model's file is there.
    listing = vguest.check(f"./itcb-dongle --list-controllers --firmware-dir {GUEST_FW};"
                           " ./itcb-dongle --list-controllers --firmware-dir /nonexistent")
    usb_id = "8087:%04x" % {**personalities.INTEL_LEGACY_CHIPS, **personalities.INTEL_TLV_CHIPS}[chip]["pid"]
    rows = [line for line in listing.splitlines() if line.startswith(usb_id)]
    assert len(rows) == 2 and all("Intel" in row for row in rows), listing
    assert f"intel/{stem}.sfi (present, firmware-iwlwifi)" in rows[0], listing
    assert f"intel/{stem}.sfi (MISSING, firmware-iwlwifi)" in rows[1], listing

    # 3. Our binary loads the same file through the same dongle.
    clear_record(vguest)
    started = time.time()
    name = f"intel-{chip}"
    start(vguest, name, f"--role peripheral --transport usb --firmware-dir {GUEST_FW} --name {NAMES[chip]}")
    try:
        wait_advertising(vguest, name, timeout=600)  # a hang limit: 120-150 s under load
        ours = recorded(vguest)
        no_personality_errors(vguest)
        assert_same(loading(ours), loading(theirs), "Linux")
        assert all(bulk for c, bulk in ours if opcode(c) == SECURE_SEND), "we sent Secure Send on EP0"
        print(f"\n{chip}: Linux loaded in {linux_seconds:.0f} s, we in {time.time() - started:.0f} s;"
              f" {len(loading(ours))} loading commands identical")
        # 4. The loaded chip is a controller: our peripheral answers questions through it.
        ask(link, NAMES[chip], QUESTIONS)
    finally:
        stop(vguest, name)


@pytest.mark.parametrize("chip", ["8265", "9560", "ax200", "ax211"])
def test_intel_linux_and_we_ask_the_chip_for_the_same_file(chip, vguest, firmware):
    """The file each chip needs, named from what it answers: btintel's request in
    the kernel log, and ours in --list-controllers, from the same emulated chip."""
    stem = INTEL[chip]
    linux_firmware(vguest, firmware)
    plug_personality(vguest, chip, f"name-{chip}")
    wait_kernel(vguest, f"name-{chip}", f"Failed to load Intel firmware file intel/{stem}.sfi", timeout=60)
    listing = vguest.check("./itcb-dongle --list-controllers --firmware-dir /nonexistent")
    assert f"intel/{stem}.sfi (MISSING, firmware-iwlwifi)" in listing, listing
    no_personality_errors(vguest)


# ---------------------------------------------------------------- Realtek

def realtek_over_usb(guest, firmware, chip, label, rom_version=None, hang=False):
    """Plugs in the un-patched chip (btrtl finds no file and gives up), then starts
    our peripheral, which downloads the firmware; returns its program name."""
    linux_firmware(guest, firmware)
    plug_personality(guest, chip, label, rom_version)
    wait_kernel(guest, label, f"RTL: firmware file rtl_bt/{REALTEK[chip]} not found", timeout=60)
    time.sleep(0.5)
    clear_record(guest)
    if hang:
        guest.check("wait_hci_idle; touch hang-until-port-reset")  # not while the kernel still resets hci0 itself
    transport = "usb:%04x:%04x" % personalities.make(chip).usb_id
    start(guest, label, f"--role peripheral --transport {transport} --firmware-dir {GUEST_FW} --name {NAMES[chip]}")
    wait_advertising(guest, label, timeout=90)
    return label


def bumble_rtk_download(chip, rom, firmware, tmp_path):
    """Bumble's rtk driver over H4 (vendor_controller.py, the same personality, the
    same ROM version): the commands of its download phase."""
    emulation = VendorEmulation(chip, str(tmp_path / "bumble.hex"), "--rom-version", str(rom))
    try:
        out = subprocess.run([sys.executable, REFERENCE, "rtk", str(emulation.ports[0])], capture_output=True,
                             text=True, timeout=120,
                             env={**os.environ, "BUMBLE_RTK_FIRMWARE_DIR": os.path.join(firmware, "rtl_bt")})
        assert "DONE" in out.stdout, f"Bumble's rtk driver failed:\n{out.stdout}\n{out.stderr}"
        return realtek_download_phase([c[1:] for c in emulation.commands()])  # H4 type byte dropped
    finally:
        emulation.stop()


@pytest.mark.parametrize("chip", list(REALTEK))
def test_realtek_linux_reference(chip, vguest, link, firmware, tmp_path):
    """Linux's btrtl (6.1) loads the real files through the emulated ROM first; then,
    the chip power-cycled and Linux kept away, we do, and the chip answers
    questions. Our download over USB is the one Bumble's rtk driver sends over H4
    to the same personality, command for command. The download itself (every
    0xFC20 fragment, the patch Linux and we build from the file, the config and
    the ROM version) is identical byte for byte, but for the last fragment's
    padding (Linux sends its exact remainder; we pad it to 252 bytes with
    zeros, as Bumble's driver does). Around it the two differ by design
    (docs/DONGLES.md): Linux reads Local Version, then the ROM version,
    and after the download reads Local Version to log the new firmware, its HCI
    core's Reset coming later; we begin with HCI Reset and read the ROM version
    again after the download."""
    rom = realtek_rom_version(os.path.join(firmware, "rtl_bt", REALTEK[chip]))
    label = f"linux-{chip}"
    linux_firmware(vguest, firmware, [f"rtl_bt/{REALTEK[chip]}", f"rtl_bt/{REALTEK_CONFIG[chip]}"])
    plug_personality(vguest, chip, label, rom)
    kernel = wait_kernel(vguest, label, ("RTL: fw version", "RTL: firmware file", "RTL: download fw command failed"),
                         timeout=240)
    assert "RTL: fw version" in kernel, kernel
    assert f"RTL: loading rtl_bt/{REALTEK[chip]}" in kernel and f"RTL: loading rtl_bt/{REALTEK_CONFIG[chip]}" in kernel, kernel
    time.sleep(1)
    theirs = [c for c, _ in recorded(vguest)]
    no_personality_errors(vguest)
    first = next(i for i, c in enumerate(theirs) if opcode(c) == 0xFC20)
    assert [opcode(c) for c in theirs[:first]][-2:] == [0x1001, 0xFC6D], [hex(opcode(c)) for c in theirs[:first]]

    name = f"ours-{chip}"
    try:
        realtek_over_usb(vguest, firmware, chip, name, rom_version=rom)
        ours = [c for c, _ in recorded(vguest)]
        no_personality_errors(vguest)
        assert "firmware loaded" in vguest.file(f"{name}.log"), vguest.file(f"{name}.log")
        ask(link, NAMES[chip], QUESTIONS)
    finally:
        stop(vguest, name)

    # Bumble's driver, the same ROM: the same commands from the first HCI Reset to the last.
    mine, bumble = realtek_download_phase(ours), bumble_rtk_download(chip, rom, firmware, tmp_path)
    assert len(mine) == len(bumble), f"{len(mine)} commands, Bumble sent {len(bumble)}"
    for i, (a, b) in enumerate(zip(mine, bumble)):
        assert a == b, f"command {i} differs:\n ours   {a.hex()}\n Bumble {b.hex()}"
    codes = [opcode(c) for c in mine]
    assert codes[:3] == [0x0C03, 0x1001, 0xFC6D] and codes[-2:] == [0xFC6D, 0x0C03], [hex(c) for c in codes]
    assert set(codes[3:-2]) == {0xFC20} and mine[-3][3] & 0x80

    def download(commands):
        return [c for c in commands if opcode(c) == 0xFC20]
    mine, linux = download(ours), download(theirs)
    rtl = "\n".join(line for line in kernel.splitlines() if "RTL" in line)
    assert len(mine) == len(linux), f"{len(mine)} download fragments, Linux sent {len(linux)}:\n{rtl}"
    # The one difference, written down (RealtekLoader.writeFragment, docs/DONGLES.md):
    # Linux sends the last fragment's exact remainder, we pad it to 252 bytes with
    # zeros as Bumble's driver does. Linux's last fragment, padded so, is ours.
    last = linux[-1][:2] + bytes([253]) + linux[-1][3:] + bytes(253 - linux[-1][2])
    for i, (a, b) in enumerate(zip(mine, linux[:-1] + [last])):
        assert a == b, f"fragment {i} differs:\n ours  {a[-40:].hex()}…\n Linux {b[-40:].hex()}…\n{rtl}"
    assert linux[-1][2] < 253 and mine[-1][3] & 0x80, (linux[-1][:4].hex(), mine[-1][:4].hex())
    after = [opcode(c) for c in theirs[theirs.index(linux[-1]) + 1:]]
    assert after[:1] == [0x1001], [hex(c) for c in after[:4]]
    print(f"\n{chip}: Linux's btrtl and we sent the same {len(mine)} download fragments")


def test_realtek_warm_start_hang_is_recovered_with_a_port_reset(vguest, link, firmware):
    """A Realtek ROM that drops HCI Reset until its port is reset: the program
    resets the port once; the reset is no power cycle (the chip keeps its state)
    and the download follows."""
    chip = "rtl8761bu"
    name = "hang-rtl"
    try:
        realtek_over_usb(vguest, firmware, chip, name, hang=True)
        log = vguest.file(f"{name}.log")
        assert "did not answer HCI Reset" in log and "resetting its USB port" in log and "firmware loaded" in log, log
        gadget = vguest.file("gadget.log")
        assert "HCI Reset dropped: hanging until a port reset" in gadget, gadget
        assert "port reset: the controller answers HCI Reset again" in gadget, gadget
        no_personality_errors(vguest)
        ask(link, NAMES[chip], 2)
    finally:
        stop(vguest, name)


# ---------------------------------------------------------------- Broadcom BCM20702 (patchram over USB)
#
# The chip as the dongles sold under 0a5c:21e8 show it: vendor class FF/01/01 on
# the device and interface 0, so the guest's btusb takes it as a Broadcom
# (BTUSB_BCM_PATCHRAM) and Linux's btbcm sets it up first: the second reference.
# No BCM20702 patch may be redistributed: the tests write a .hcd in the real
# record format (personalities.synthetic_hcd) where Linux and we look for it
# first on this VID:PID, brcm/BCM20702A1-0a5c-21e8.hcd.
#
# Linux btbcm.c (6.1; facts, not code), USB: Reset, Read Local Version, Read
# Verbose Config (0xFC79), Read Controller Features (0xFC6E), Read Local Name,
# Read USB Product (0xFC5A: the file name's -vid-pid), then the file: Download
# Minidriver (0xFC2E), 50 ms, each record as a command in order, 250 ms for the
# restart; again Reset, Read Local Version, Read Local Name; Read BD_ADDR (a
# model's default address marks it "no address"). It looks for
# brcm/BCM20702A1-0a5c-21e8.hcd, then brcm/BCM-0a5c-21e8.hcd; we for the first
# one, then brcm/BCM20702A1.hcd. Ours is the same without the reads made for the
# log: Reset, Read Local Version, Download Minidriver, the records, Reset, Read
# Local Version, Read BD_ADDR. A missing file: Linux logs an error and goes on
# from ROM; we warn and go on from ROM (docs/DONGLES.md).

BCM = "bcm20702a1"
BCM_HCD = "brcm/BCM20702A1-0a5c-21e8.hcd"
BCM_NAME = "Bcm20702"
BCM_LOADING = (0xFC2E, personalities.BCM_WRITE_RAM, personalities.BCM_LAUNCH_RAM)
# What both hosts send around the download (Linux's reads for its log left out).
BCM_CORE = (0x0C03, 0x1001, *BCM_LOADING, 0x1009)


def bcm_command(opcode, params=b""):
    return struct.pack("<HB", opcode, len(params)) + params


def bcm_write_hcd(guest, linux):
    """The test's .hcd in /mnt/work/fw (ours, and what the personality checks),
    and in the kernel's firmware path when `linux`; returns its records as commands."""
    data = personalities.synthetic_hcd(40)
    folders = [os.path.join(guest.work, "fw")] + ([os.path.join(guest.work, "linuxfw")] if linux else [])
    shutil.rmtree(os.path.join(guest.work, "linuxfw"), ignore_errors=True)
    os.makedirs(os.path.join(guest.work, "linuxfw"))
    for folder in folders:
        os.makedirs(os.path.join(folder, "brcm"), exist_ok=True)
        with open(os.path.join(folder, BCM_HCD), "wb") as f:
            f.write(data)
    return [bcm_command(opcode, params) for opcode, params in personalities.hcd_records(data)]


def bcm_until_address(commands):
    """The set-up as far as its Read BD_ADDR, cut to the commands both hosts send."""
    codes = [opcode(c) for c in commands]
    assert 0x1009 in codes, [hex(c) for c in codes]
    return [c for c in commands[:codes.index(0x1009) + 1] if opcode(c) in BCM_CORE]


def bcm_expected(records):
    reset, version = bcm_command(0x0C03), bcm_command(0x1001)
    return [reset, version, bcm_command(0xFC2E), *records, reset, version, bcm_command(0x1009)]


def test_bcm20702_over_usb_loads_the_hcd_as_linux_does(vguest, link):
    """Linux's btbcm loads the test's .hcd through the emulated BCM20702; after a
    power cycle (Linux finds no file) our peripheral, started with --transport usb,
    loads it: the records arrive intact and in order, the sequence is Linux's
    without its informational reads, the shared default address is not used,
    and the program answers a Bumble central's questions."""
    records = bcm_write_hcd(vguest, linux=True)
    plug_personality(vguest, BCM, "linux-bcm")
    kernel = wait_kernel(vguest, "linux-bcm", "BCM: Using default device address (20:70:02:a0:00:00)", timeout=120)
    assert f"BCM20702A1 '{BCM_HCD}' Patch" in kernel, kernel
    theirs = [c for c, _ in recorded(vguest)]
    no_personality_errors(vguest)
    codes = [opcode(c) for c in theirs]
    assert codes[:4] == [0x0C03, 0x1001, 0xFC79, 0xFC6E] and 0xFC5A in codes[:codes.index(0xFC2E)], \
        [hex(c) for c in codes[:8]]
    assert bcm_until_address(theirs) == bcm_expected(records), "Linux's set-up does not follow the file"

    # Power cycle (back to the ROM); Linux finds no file and runs it from ROM.
    bcm_write_hcd(vguest, linux=False)
    power_cycle(vguest, "cold-bcm")
    kernel = wait_kernel(vguest, "cold-bcm", "BCM: Using default device address", timeout=120)
    assert "BCM: firmware Patch file not found" in kernel, kernel
    assert not any(opcode(c) in BCM_LOADING for c, _ in recorded(vguest))

    # --list-controllers finds the vendor-class dongle and names its file.
    listing = vguest.check(f"./itcb-dongle --list-controllers --firmware-dir {GUEST_FW}")
    rows = [line for line in listing.splitlines() if line.startswith("0a5c:21e8")]
    assert len(rows) == 1 and "Broadcom" in rows[0] and f"{BCM_HCD} (present, no Debian package ships it)" in rows[0], listing

    clear_record(vguest)
    name = "bcm"
    start(vguest, name, f"--role peripheral --transport usb --firmware-dir {GUEST_FW} --name {BCM_NAME}")
    try:
        wait_advertising(vguest, name, timeout=120)
        ours = [c for c, _ in recorded(vguest)]
        no_personality_errors(vguest)
        want = bcm_expected(records)
        assert ours[:len(want)] == want, [c[:8].hex() for c in ours[:8]]
        assert bcm_until_address(ours) == bcm_until_address(theirs)
        log = vguest.file(f"{name}.log")
        assert f"Broadcom BCM20702A1: loading {GUEST_FW}/{BCM_HCD}" in log, log
        assert "Broadcom BCM20702A1: patchram loaded (41 records, build 256 -> 291)" in log, log
        assert "20:70:02:A0:00:00 is a default every unit of the model shares" in log, log
        ask(link, BCM_NAME, QUESTIONS)
    finally:
        stop(vguest, name)


def test_bcm20702_over_usb_without_its_hcd_runs_from_rom(vguest, link):
    """docs/DONGLES.md: a missing .hcd on a USB dongle (it runs from ROM) is a
    warning naming every file looked for; nothing is downloaded, and the ROM
    answers questions."""
    bcm_write_hcd(vguest, linux=False)
    plug_personality(vguest, BCM, "rom-bcm")
    wait_kernel(vguest, "rom-bcm", "BCM: Using default device address", timeout=120)
    clear_record(vguest)
    name = "bcm-rom"
    empty = "/mnt/work/nofw"
    vguest.check(f"mkdir -p {empty}")
    start(vguest, name, f"--role peripheral --transport usb --firmware-dir {empty} --name {BCM_NAME}")
    try:
        wait_advertising(vguest, name, timeout=120)
        log = vguest.file(f"{name}.log")
        # Linux btbcm's USB names in its order (chip-vid-pid, BCM-vid-pid), then the chip's own.
        assert (f"warning: Broadcom BCM20702A1: firmware file {empty}/{BCM_HCD} or {empty}/brcm/BCM-0a5c-21e8.hcd"
                f" or {empty}/brcm/BCM20702A1.hcd is missing; the controller runs from its ROM") in log, log
        assert "error:" not in log, log
        ours = [c for c, _ in recorded(vguest)]
        no_personality_errors(vguest)
        assert not any(opcode(c) in BCM_LOADING for c in ours), [c[:8].hex() for c in ours]
        assert [opcode(c) for c in ours[:3]] == [0x0C03, 0x1001, 0x1009], [c[:8].hex() for c in ours[:6]]
        assert "20:70:02:A0:00:00 is a default every unit of the model shares" in log, log
        ask(link, BCM_NAME, 5)
    finally:
        stop(vguest, name)
