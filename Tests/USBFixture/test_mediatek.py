"""MediaTek dongles (MT7921, MT7922, MT7925) on the QEMU USB fixture, in a guest that
runs Debian 13's kernel (6.12: its btusb knows all three chips, and its btmtk is the
driver kiosks run). The emulated dongle takes the chip's personality
(Tests/PythonSupport/personalities.py) on a FunctionFS dongle (ffs_dongle.py;
GadgetFS cannot take a 258-byte WMT chunk on EP0) and checks every WMT command it
receives against the real Debian file.

- Linux's btmtk as the reference: the kernel loads the chip's RAM code first (the
  file in its firmware folder); the dongle is power-cycled, Linux is kept away and
  our peripheral loads the same file. The register reads, the WMT download, the
  pauses before each second request for an answer and the Bluetooth off at the end
  are compared; then questions through the chip.
- A warm MT7922 gets no download; an MT7922 that stalls a register read ends in
  one line (exit 4).
- A running chip that wedges gets btmtk.c's subsystem reset (the register requests
  in the kernel's order; the emulated chip comes back from nothing else), the USB
  port reset Linux queues after it, then the download again and questions.

One guest for the module; each test plugs in the dongle it needs. Firmware:
scripts/firmware-files.sh (Debian 13's firmware-mediatek), in /mnt/work/fw (the
personality and our binary) and, when Linux is to load, /mnt/work/linuxfw."""
import os
import shutil
import struct
import time

import personalities
import pytest
from fixture import Guest
from vendor_guest import (GUEST_FW, QUESTIONS, ask, clear_record, linux_firmware, no_personality_errors, opcode,
                          plug_personality, power_cycle, recorded, settled, start, stop, wait_advertising, wait_kernel)


@pytest.fixture(scope="module")
def firmware(firmware_dir):
    return firmware_dir


@pytest.fixture(scope="module")
def mguest(link):
    g = Guest(link.ports[0], kernel=os.environ.get("USB_FIXTURE_MEDIATEK_KERNEL", "6.12"))
    try:
        yield g
    finally:
        g.stop()


# The MediaTek download goes through a FunctionFS dongle (ffs_dongle.py) on the same UDC,
# bus 1, path 1-1: GadgetFS refuses EP0 OUT requests over 256 bytes (a 250-byte WMT chunk
# is a 258-byte command) and completes one before the gadget has read it. Of gadget.options
# (USB_FIXTURE_GADGET_OPTIONS) ffs_dongle.py takes --trace only.
PLUG_FFS = """old=$(cat /run/gadget.pid); unplug; kill -TERM "$old"; wait_gone || exit 1
# until it has exited (a zombie counts: its files, ep0 of itcb1 among them, are closed)
for i in $(seq 50); do grep -qs "^State:[[:space:]]*[^Z]" /proc/$old/status || break; sleep 0.1; done
: > vendor-commands.hex; : > vendor-control.txt; rm -f vendor-errors.txt; mark {label}
modprobe usb_f_fs || exit 1
grep -q " /sys/kernel/config " /proc/mounts || mount -t configfs configfs /sys/kernel/config
/usr/bin/python3 -u ffs_dongle.py $(cat gadget.options) {args} 1 "$(cat /run/gadget.port)" >> gadget.log 2>&1 &
echo $! > /run/gadget.pid
for i in $(seq 300); do [ -e /sys/bus/usb/devices/1-1/idVendor ] && break; sleep 0.1; done
wait_btusb"""


# personality → its file under mediatek/ (Debian 13's firmware-mediatek), the name it advertises
MEDIATEK = {"mt7921": ("BT_RAM_CODE_MT7961_1_2_hdr.bin", "Mtk7921"),
            "mt7922": ("BT_RAM_CODE_MT7922_1_1_hdr.bin", "Mtk7922"),
            "mt7925": ("mt7925/BT_RAM_CODE_MT7925_1_1_hdr.bin", "Mtk7925")}


def plug_mediatek(guest, firmware, chip, file, label, extra="", ffs=False, linux=False):
    """A MediaTek chip with its file in the guest's firmware folder. Linux's has none
    (the kernel's btmtk gives up), or with linux=True the same file: the kernel loads
    it (the caller waits for that; the records are left as the kernel makes them).
    ffs: served by a FunctionFS dongle (PLUG_FFS; the unplug/plug helpers still work)."""
    os.makedirs(os.path.dirname(os.path.join(guest.work, "fw", "mediatek", file)), exist_ok=True)
    shutil.copy(os.path.join(firmware, "mediatek", file), os.path.join(guest.work, "fw", "mediatek", file))
    linux_firmware(guest, firmware, [f"mediatek/{file}"] if linux else [])
    guest.check("rm -f vendor-answer-gaps.txt")
    if ffs:
        guest.check(PLUG_FFS.format(label=label, args=f"--personality {chip} --firmware-dir {GUEST_FW}{extra}"),
                    timeout=90)
    else:
        plug_personality(guest, chip, label, extra=extra)
    if linux:
        return
    try:  # the kernel's own attempt (btmtk) finds no file
        wait_kernel(guest, label, "Failed to", timeout=30)
    except AssertionError:
        pass
    clear_record(guest)
    guest.check(": > vendor-control.txt; rm -f vendor-errors.txt vendor-answer-gaps.txt")


def test_mediatek_over_usb_refused_register_read_exit_4(mguest, firmware):
    """An MT7922 (13d3:3568) that stalls the register reads btmtk.c sends as vendor
    requests (0xC0/0x63): --list-controllers names it and its file; the USB board
    reads the id through the vendor request, the stall becomes the steps' refused
    answer: one error line, exit 4, no hang."""
    file = "BT_RAM_CODE_MT7922_1_1_hdr.bin"
    plug_mediatek(mguest, firmware, "mt7922", file, "mtk-refused", extra=" --mtk-fault register")
    listing = mguest.check(f"./itcb-dongle --list-controllers --firmware-dir {GUEST_FW}")
    assert f"MediaTek  mediatek/{file} (present, firmware-mediatek)" in listing, listing
    mguest.check(": > vendor-control.txt")
    _, out = mguest.run(f"timeout 60 ./itcb-dongle --role peripheral --transport usb --firmware-dir {GUEST_FW}; echo rc=$?",
                        timeout=90)
    errors = [line for line in out.splitlines() if "error" in line]
    assert "rc=4" in out and len(errors) == 1, out
    # The VID:PID names the chip before any register answers.
    assert "MediaTek MT7922: RAM code download failed: controller refused a register read or write" in errors[0], out
    assert mguest.file("vendor-control.txt").splitlines()[0] == "c0 63 8000 0008 4 -> stall", mguest.file("vendor-control.txt")


def mediatek_expected(path, warm=False, present=()):
    """The WMT commands of the download (status query per section, its 250-byte chunks,
    none for a section the chip has: warm, or in `present`), then function control 1."""
    def wmt(operation, flag, data):
        return struct.pack("<HBBBHB", 0xFC6F, 5 + len(data), 1, operation, len(data) + 1, flag) + data

    out = []
    for index, (section_map, section) in enumerate(personalities.mediatek_sections(open(path, "rb").read())):
        out.append(wmt(0x01, 0, b"\x00" + section_map))
        for at in range(0, 0 if warm or index in present else len(section), 250):
            flag = 1 if at == 0 else (3 if at + 250 >= len(section) else 2)
            out.append(wmt(0x01, flag, section[at:at + 250]))
    return out + [wmt(0x06, 0, b"\x01")]


def mediatek_reads(chip):
    """btmtk.c's id, version and flavour reads (vendor requests 0xC0/0x63) with the emulated chip's answers."""
    chip_id, version, flavour = personalities.MEDIATEK_CHIPS[chip][:3]
    return ["c0 63 8000 0008 4 -> 00000000", f"c0 63 7001 0200 4 -> {chip_id:08x}",
            f"c0 63 8002 1004 4 -> {version:08x}", f"c0 63 7001 0020 4 -> {flavour:08x}"]


ENDPOINT_RESET_OPTION = "5e 02 7401 1890 4 <- 00010001"  # the UHW write after the download


def check_mediatek_download(commands, firmware, chip, warm=False, present=""):
    """`commands` (from the set-up's first) are the file's download (or, warm, its
    status queries), then Bluetooth on, and nothing else before the host's Reset."""
    sections = [int(i) for i in present.split(",") if i]
    want = mediatek_expected(os.path.join(firmware, "mediatek", MEDIATEK[chip][0]), warm, sections)
    assert len(commands) > len(want) and opcode(commands[len(want)]) == 0x0C03, [c[:4].hex() for c in commands[:4]]
    wrong = next((i for i, (got, expected) in enumerate(zip(commands, want)) if got != expected), None)
    assert wrong is None, f"command {wrong} of {len(want)}: {commands[wrong][:12].hex()} != {want[wrong][:12].hex()}"


BLUETOOTH_OFF = bytes.fromhex("6ffc06010602000000")  # WMT function control 0 (btmtk_usb_shutdown)


def wmt_commands(commands):
    return [c for c in commands if opcode(c) == personalities.MTK_WMT]


def ours_asked(guest, link, name):
    """Our peripheral set up on the plugged-in chip, asked questions and stopped
    (SIGTERM): what the chip recorded, [commands], [control lines], [re-ask gaps µs];
    the last command before the kernel takes the chip back is Bluetooth off, after
    the host's HCI Reset."""
    start(guest, name, f"--role peripheral --transport usb --name {name} --firmware-dir {GUEST_FW}")
    try:
        wait_advertising(guest, name, timeout=300)
        ask(link, name, QUESTIONS)
    finally:
        stop(guest, name)
    no_personality_errors(guest)
    commands = [c for c, _ in recorded(guest)]
    off = commands.index(BLUETOOTH_OFF)
    assert opcode(commands[off - 1]) == 0x0C03, [c[:6].hex() for c in commands[off - 3:off + 1]]
    return (commands, guest.file("vendor-control.txt").splitlines(),
            [int(line.split()[0]) for line in guest.file("vendor-answer-gaps.txt").splitlines()])


@pytest.mark.parametrize("chip", ["mt7921", "mt7922", "mt7925"])
def test_mediatek_linux_reference(chip, mguest, link, firmware):
    """Debian 13's btusb + btmtk (6.12) loads the chip's RAM code from the real
    Debian file through the emulated chip; the chip is power-cycled, Linux is kept
    away (no file in its folder) and our peripheral loads the same file. The
    chip reports every section but the first as there already (--mtk-present):
    Linux's whole MT7922 download took 38 s of the TCG guest (another guest
    beside it), its first section alone takes 2 to 3 s; our whole download of
    each file is checked by the reset tests below. Compared: the register reads (id, version, flavour) in order, no
    subsystem reset before the first download, every WMT command (each section's
    status query, the first section's 250-byte chunks, Bluetooth on), the endpoint
    reset option after the download, a pause before each second request for an
    answer (Linux's udelay(500), seen from 448 µs in the loaded TCG guest, whose
    delay loop can run short: held to 400; our 1 ms and more), and Bluetooth off when
    the host is done (Linux's when it powers hci0 down after its set-up, ours at
    SIGTERM). Then questions through the chip."""
    file, name = MEDIATEK[chip]
    path = os.path.join(firmware, "mediatek", file)
    present = ",".join(str(i) for i in range(1, len(personalities.mediatek_sections(open(path, "rb").read()))))
    want = mediatek_expected(path, present=[int(i) for i in present.split(",")])
    # 1. Linux loads the file.
    label = f"linux-{chip}"
    plug_mediatek(mguest, firmware, chip, file, label, extra=f" --mtk-present {present}", ffs=True, linux=True)
    kernel = wait_kernel(mguest, label, ("Device setup in", "Failed to", "failed"), timeout=300)
    assert "Device setup in" in kernel, kernel
    theirs = [c for c, _ in settled(mguest, quiet=4)]  # and its HCI init, and Bluetooth off at auto power-off
    kernel = mguest.check(f"dmesg_since {label}")
    linux_control = mguest.file("vendor-control.txt").splitlines()
    linux_gaps = [int(line.split()[0]) for line in mguest.file("vendor-answer-gaps.txt").splitlines()]
    no_personality_errors(mguest)
    assert "failed" not in kernel and "timeout" not in kernel, kernel
    assert linux_control[:5] == mediatek_reads(chip) + [ENDPOINT_RESET_OPTION], linux_control
    check_mediatek_download(theirs, firmware, chip, present=present)
    assert wmt_commands(theirs)[-1] == BLUETOOTH_OFF, [c.hex() for c in wmt_commands(theirs)[-2:]]
    assert len(linux_gaps) >= 3 and min(linux_gaps) >= 400, sorted(linux_gaps)

    # 2. Power cycle, nothing for Linux; 3. ours.
    linux_firmware(mguest, firmware)
    power_cycle(mguest, f"cold-{chip}")
    wait_kernel(mguest, f"cold-{chip}", "Failed to", timeout=60)
    clear_record(mguest)
    mguest.check(": > vendor-control.txt; rm -f vendor-errors.txt vendor-answer-gaps.txt")
    ours, control, gaps = ours_asked(mguest, link, name)
    assert control[:5] == linux_control[:5], (control[:5], linux_control[:5])
    check_mediatek_download(ours, firmware, chip, present=present)
    assert wmt_commands(ours)[:len(want)] == wmt_commands(theirs)[:len(want)], "our WMT commands are not Linux's"
    assert len(gaps) >= 3 and min(gaps) >= 1000, sorted(gaps)
    setup = next(line for line in kernel.splitlines() if "Device setup in" in line)
    print(f"\n{chip}: {len(want)} WMT commands as Linux's; re-ask gaps Linux {min(linux_gaps)}-{max(linux_gaps)} µs,"
          f" ours {min(gaps)}-{max(gaps)} µs; Linux: {setup.split('] ')[-1]}")


def test_mediatek_over_usb_warm_chip_gets_no_download(mguest, link, firmware):
    """An MT7922 whose RAM code runs already (an earlier start loaded it: every
    status query says so): our peripheral reads its id, sends each section's
    status query and nothing of the file, sets the endpoint reset option, turns
    Bluetooth on, answers questions, and at SIGTERM turns Bluetooth off."""
    chip = "mt7922"
    file, name = MEDIATEK[chip]
    plug_mediatek(mguest, firmware, chip, file, f"{chip}-warm", extra=" --mtk-warm", ffs=True)
    commands, control, gaps = ours_asked(mguest, link, name)
    # The id, version and flavour reads, then the endpoint reset option; the lines
    # after them are the kernel's, probing again after our exit.
    assert control[:5] == mediatek_reads(chip) + [ENDPOINT_RESET_OPTION], control
    check_mediatek_download(commands, firmware, chip, warm=True)
    # Only the status queries and the function switches are held, each answer once.
    assert len(gaps) >= 3 and min(gaps) >= 1000, sorted(gaps)
    assert "RAM code loaded" not in mguest.file(f"{name}.log"), mguest.file(f"{name}.log")


def mediatek_reset_control(chip):
    """The vendor requests of btmtk_usb_subsys_reset on the emulated chip (its reset
    registers' power-on values, each write computed as btmtk.c computes it from the
    value read), then the reset-done poll (done at once), on the MT7922 the 0xFF
    write to the UDMA interrupt status, and the chip id read again."""
    chip_id = personalities.MEDIATEK_CHIPS[chip][0]
    registers, last, lines = dict(personalities.MTK_RESET_REGISTERS), 0, []
    for op in personalities.mediatek_reset_sequence(chip_id):
        where = f"{op[1] >> 16:04x} {op[1] & 0xFFFF:04x} 4"
        if op[0] == "read":
            last = registers.get(op[1], 0)
            lines.append(f"de 01 {where} -> {last:08x}")
        else:
            registers[op[1]] = op[2](last) if callable(op[2]) else op[2]
            lines.append(f"5e 02 {where} <- {registers[op[1]]:08x}")
    lines.append(f"de 01 7000 2510 4 -> {personalities.MTK_RST_DONE:08x}")
    if chip_id == 0x7922:
        lines.append("5e 02 7400 0024 4 <- 000000ff")
    return lines + [f"c0 63 7001 0200 4 -> {chip_id:08x}"]


def wait_log_count(guest, name, text, count, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        log = guest.file(f"{name}.log")
        if log.count(text) >= count:
            return log
        if guest.file(f"{name}.rc").strip():
            break
        time.sleep(0.5)
    raise AssertionError(f"{name}: {text!r} not {count} times within {timeout} s (exit {guest.file(name + '.rc').strip()}):\n"
                         f"{guest.file(name + '.log')[-3000:]}\n--- gadget\n{guest.file('gadget.log')[-3000:]}")


@pytest.mark.parametrize("chip", ["mt7921", "mt7922", "mt7925"])
def test_mediatek_over_usb_wedged_chip_gets_its_subsystem_reset(chip, mguest, link, firmware):
    """A running chip (its RAM code loaded at an earlier start: --mtk-warm) answers
    questions, then wedges (gadget file wedged-until-chip-reset): it drops every HCI
    command; only Linux's subsystem reset for the chip brings it back, cold
    (personalities.MediaTek.wedge; a port reset does not help). Our peripheral, with
    the probe a kiosk has (--health-check 1), finds it silent, sends HCI Reset
    (step 1), then resets the chip with its own reset (step 2, no USB port reset):
    the register requests are btmtk_usb_subsys_reset's for this chip, in order, each
    value written computed from the value read; the reset-done poll; the chip id read
    again; then, the chip being cold, the whole file is downloaded again and checked,
    and the chip answers questions."""
    file, name = MEDIATEK[chip]
    plug_mediatek(mguest, firmware, chip, file, f"{chip}-wedge", extra=" --mtk-warm", ffs=True)
    start(mguest, name, f"--role peripheral --transport usb --name {name} --firmware-dir {GUEST_FW} --health-check 1")
    try:
        wait_advertising(mguest, name, timeout=600)
        ask(link, name, 2)
        no_personality_errors(mguest)
        assert "RAM code loaded" not in mguest.file(f"{name}.log"), "a warm chip gets no download"
        before = len(mguest.file("gadget.log"))
        mguest.check(": > vendor-control.txt; : > vendor-commands.hex; touch wedged-until-chip-reset")
        wedged = time.time()
        log = wait_log_count(mguest, name, "info: advertising", 2, timeout=600)
        back = time.time()
        ask(link, name, QUESTIONS)
        print(f"\n{chip}: advertising again {back - wedged:.0f} s after it wedged (the reset and the download);"
              f" {QUESTIONS} questions in {time.time() - back:.0f} s")
    finally:
        stop(mguest, name)
    # Between the chip's reset and the port reset the dongle is closed and opened again:
    # the kernel's btusb has it for a moment, cold (6.1's, which has no row for the
    # MT7925, sends it Read Local Features; 6.12's btmtk reads its ids and finds no file).
    no_personality_errors(mguest, kernel_probe=chip == "mt7925" and mguest.kernel == "6.1")
    label = f"MediaTek {personalities.MEDIATEK_CHIPS[chip][4]}"
    assert log.count("resetting the chip with its own reset") == 1, log
    # The port reset Linux queues after the subsystem reset (btusb_mtk_reset), then the download.
    assert log.count(f"{label} at usb:") == 1 and log.count("subsystem reset done; resetting its USB port") == 1, log
    assert log.count(f"{label}: RAM code loaded") == 1, log
    gadget = mguest.file("gadget.log")[before:]
    assert "the chip wedged" in gadget and "dropped: the chip is wedged" in gadget, gadget[-3000:]
    assert gadget.count("subsystem reset by btmtk.c's register sequence") == 1, gadget[-3000:]
    # Our id reads, the reset, the poll, the id again, version and flavour, the download
    # (the file whole, as from power-on), the endpoint reset option; before them, the
    # kernel's reads while btusb had the chip between our two sessions.
    # Then the USB port reset, and (after the kernel's reads while btusb had the chip
    # again) the fresh set-up's reads and the endpoint reset option after the download.
    control = mguest.file("vendor-control.txt").splitlines()
    first = next(i for i, line in enumerate(control) if line.startswith(("de 01", "5e 02")))
    ours = mediatek_reads(chip)[:2] + mediatek_reset_control(chip)
    assert control[first - 2:first - 2 + len(ours)] == ours, control[first - 2:]
    port_reset = control.index("port reset", first)
    after = control.index(ENDPOINT_RESET_OPTION, port_reset)
    assert control[after - 4:after] == mediatek_reads(chip), control[port_reset:after + 1]
    commands = [c for c, _ in recorded(mguest)]
    # Before the reset: the probe and HCI Reset, dropped; from the first WMT command on, the download.
    at = next(i for i, c in enumerate(commands) if opcode(c) == personalities.MTK_WMT)
    assert {opcode(c) for c in commands[:at]} >= {0x0C03}, [c[:4].hex() for c in commands[:at]]
    check_mediatek_download(commands[at:], firmware, chip)
