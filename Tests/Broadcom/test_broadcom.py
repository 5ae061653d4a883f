"""Broadcom/Cypress patchram, proven against the real .hcd files of Debian's
bluez-firmware (the Raspberry Pi radios BCM43430A1, BCM43430B0, BCM4345C0,
BCM4345C5; scripts/firmware-files.sh fetches and extracts them under .cache/)
and an emulated Broadcom ROM (Tests/PythonSupport/personalities.py, class Broadcom,
in front of a Bumble controller, H4 over TCP): every record is compared with
the file byte for byte, a command during the chip's restart after Launch RAM
is an error, and the ROM reports its model's default address.

The command sequence is the one Linux btbcm.c sends (facts, not code): Reset,
Read Local Version, Download Minidriver (0xFC2E), the file's records in order,
a pause for the restart, Reset, Read Local Version, Read BD_ADDR. BTstack's
chipset/bcm sends the same download (Download Minidriver, the records) and
waits for the restart too, and its Update UART Baud Rate has the same
parameters as ours (two zero bytes, the rate little-endian). Linux also reads the verbose config (0xFC79),
the controller features (0xFC6E) and the local name before the download: for
its log only, left out here.

BCM20702 (USB dongles): no .hcd for it may be redistributed, so the test
writes one in the same record format."""
import os
import struct
import threading
import time

import pytest
from harness import Dongle, VendorEmulation, failed_set_up, framing_losses, twenty_answers
from personalities import synthetic_hcd

CHIPS = {"bcm43430a1": ("Broadcom BCM43430A1", "BCM43430A1.hcd", "AA:AA:AA:AA:AA:AA"),
         "bcm43430b0": ("Broadcom BCM43430B0", "BCM43430B0.hcd", None),
         "bcm4345c0": ("Broadcom BCM4345C0", "BCM4345C0.hcd", "43:45:C0:00:1F:AC"),
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


def failed_start(workdir):
    """A BCM43430A1 with the files under `workdir`: exit 4 and its one error line, and the commands sent."""
    emulation = VendorEmulation("bcm43430a1", os.path.join(workdir, "failed.hex"))
    return failed_set_up(emulation, workdir), emulation.commands()


def test_broadcom_missing_hcd_exit_4(workdir):
    os.makedirs(os.path.join(workdir, "brcm"))
    error, _ = failed_start(workdir)
    assert f"{workdir}/brcm/BCM43430A1.hcd" in error and "bluez-firmware" in error, error


@pytest.mark.parametrize("kind", ["too-large", "directory", "fifo", "device", "loop"])
def test_broadcom_hcd_that_is_there_but_refused_says_what_it_is(kind, workdir):
    # Each used to be reported "missing; it is in the Debian package …".
    os.makedirs(os.path.join(workdir, "brcm"))
    path = os.path.join(workdir, "brcm", "BCM43430A1.hcd")
    if kind == "too-large":
        with open(path, "wb") as f:
            f.truncate(512 * 1024 + 1)  # sparse: one byte over the patchram limit
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        os.symlink("/dev/zero", path)
    else:
        os.symlink(path, path)
    error, commands = failed_start(workdir)
    what = {"too-large": "is 524289 bytes, over the limit of 524288 bytes",
            "directory": "is a directory, not a regular file",
            "fifo": "is a FIFO (named pipe), not a regular file",
            "device": "is a character device, not a regular file",
            "loop": "is a loop of symbolic links"}[kind]
    assert error == f"itcb-dongle: error: Broadcom BCM43430A1: firmware file {path} {what}", error
    assert not any(c[1:3] == b"\x2e\xfc" for c in commands), "nothing is downloaded"


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
    error, commands = failed_start(workdir)
    assert "Broadcom BCM43430A1: patchram download failed: patchram file" in error, error
    assert not any(c[1:3] == b"\x2e\xfc" for c in commands), "nothing is sent from a bad file"


def test_broadcom_bcm20702_with_a_written_hcd(workdir):
    """A BCM20702A1 (the USB dongles' chip, here over TCP) with a .hcd the test writes."""
    os.makedirs(os.path.join(workdir, "brcm"))
    path = os.path.join(workdir, "brcm", "BCM20702A1.hcd")
    with open(path, "wb") as f:
        f.write(synthetic_hcd(40))
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


# ---------------------------------------------------------------- the Pi's UART

def uart_emulation(chip, firmware_dir, workdir, name):
    tty = os.path.join(workdir, f"{name}-tty")
    emulation = VendorEmulation(chip, os.path.join(workdir, f"{name}.hex"), "--firmware-dir", firmware_dir, "--pty", tty)
    return emulation, tty


def check_uart_setup(rates, path, fast):
    """The download at 115200, the restart's Reset at 115200 (the chip's UART
    is back at its first rate), Update UART Baud Rate, then everything at `fast`."""
    launch = next(i for i, (c, _) in enumerate(rates) if c[1:3] == b"\x4e\xfc")
    assert [c for c, _ in rates[launch - len(records(path)) + 1:launch + 1]] == records(path)
    baud = next(i for i, (c, _) in enumerate(rates) if c[1:3] == b"\x18\xfc")
    assert rates[baud][0] == command(0xFC18, b"\x00\x00" + struct.pack("<I", fast))
    assert [c for c, _ in rates[launch + 1:baud]] == [command(0x0C03), command(0x1001)]
    assert all(rate == 115200 for _, rate in rates[launch - len(records(path)):baud + 1])
    assert rates[baud + 1] == (command(0x1009), fast)
    assert all(rate == fast for _, rate in rates[baud + 1:]), "a command at the old rate after the change"


def test_broadcom_pi_uart_over_a_pty(firmware_dir, workdir):
    """The Pi 4's CYW43455 (BCM4345C0, as Raspberry Pi OS's links say) on its UART, no device tree: 115200 with RTS/CTS, patchram, 3,000,000 baud
    (seen on the pseudo-terminal's termios), then 20 questions; a restart of the
    program finds the chip still at 3,000,000 and comes back to it."""
    emulation, tty = uart_emulation("bcm4345c0", firmware_dir, workdir, "pi4")
    path = os.path.join(firmware_dir, "brcm", "BCM4345C0.hcd")
    args = ("--role", "peripheral", "--name", "PiUart", "--transport", f"serial:{tty}", "--firmware-dir", firmware_dir)
    try:
        dongle = Dongle(*args)
        try:
            dongle.wait_for("info: advertising", timeout=60)
            assert emulation.errors() == []
            check_uart_setup(emulation.rates(), path, 3_000_000)
            assert dongle.count("now at 3000000 baud") == 1, dongle.log
            assert dongle.count("Broadcom BCM4345C0: patchram loaded") == 1, dongle.log
            twenty_answers(emulation.ports[1], "PiUart", "Pi UART question")
        finally:
            dongle.stop()
        first_run = len(emulation.rates())
        # The chip stays at 3,000,000 (HCI Reset keeps the rate): the next start is not understood at 115200.
        again = Dongle(*args)
        try:
            again.wait_for("info: advertising", timeout=60)
            assert again.count("did not answer at 115200 baud; trying 3000000 baud") == 1, again.log
            rates = emulation.rates()[first_run:]
            reopened = next(i for i, (_, rate) in enumerate(rates) if rate == 3_000_000)
            assert rates[reopened] == (command(0x0C03), 3_000_000)
            # Download Minidriver and the records at 3,000,000 (the chip was there), then as the first time.
            assert all(rate == 3_000_000 for c, rate in rates[reopened:] if c[1:3] in (b"\x2e\xfc", b"\x4c\xfc"))
            assert [c for c, _ in rates[reopened:] if c[1:3] == b"\x4c\xfc"] == records(path)[:-1]
            assert all("at 115200 baud while the chip listens at 3000000" in e for e in emulation.errors()), emulation.errors()
            assert again.count("now at 115200 baud") == 1 and again.count("now at 3000000 baud") == 1, again.log
        finally:
            again.stop()
    finally:
        emulation.stop()


def test_broadcom_pi_uart_at_a_chosen_rate(firmware_dir, workdir):
    """serial:PATH@460800: not answered there (the chip starts at 115200), retried at
    115200, patched, then both sides at 460800, and 20 questions. Also the arm64
    build's run in user-mode QEMU (scripts/test-arm64.sh): qemu-aarch64 7.2
    passes 460800 to the pseudo-terminal but not 921600 and above (they arrive
    as 0), so this rate, not the default 3,000,000."""
    emulation, tty = uart_emulation("bcm43430a1", firmware_dir, workdir, "pi3")
    dongle = Dongle("--role", "peripheral", "--name", "PiFast", "--transport", f"serial:{tty}@460800",
                    "--firmware-dir", firmware_dir)
    try:
        dongle.wait_for("info: advertising", timeout=90)
        assert dongle.count("did not answer at 460800 baud; trying 115200 baud") == 1, dongle.log
        rates = emulation.rates()
        first = next(i for i, (_, rate) in enumerate(rates) if rate == 115200)
        check_uart_setup(rates[first:], os.path.join(firmware_dir, "brcm", "BCM43430A1.hcd"), 460_800)
        twenty_answers(emulation.ports[1], "PiFast", "Pi at 460800")
        assert all("at 460800 baud while the chip listens at 115200" in e for e in emulation.errors()), emulation.errors()
    finally:
        dongle.stop()
        emulation.stop()


def test_broadcom_uart_is_probed_without_firmware_dir(workdir):
    """A UART's controller has no other identity: the Broadcom probe runs on a bare
    serial:PATH, and the file is looked for in /lib/firmware."""
    emulation, tty = uart_emulation("bcm43430a1", workdir, workdir, "bare")
    dongle = Dongle("--role", "peripheral", "--transport", f"serial:{tty}")
    try:
        if os.path.exists("/lib/firmware/brcm/BCM43430A1.hcd"):
            dongle.wait_for("Broadcom BCM43430A1: loading /lib/firmware/brcm/BCM43430A1.hcd", timeout=30)
        else:
            assert dongle.wait_exit(30) == 4
            # Linux's names without a board (no device tree here): the chip's, then BCM.hcd.
            assert dongle.count("Broadcom BCM43430A1: firmware file /lib/firmware/brcm/BCM43430A1.hcd or "
                                "/lib/firmware/brcm/BCM.hcd is missing; it is in the Debian package bluez-firmware") == 1, dongle.log
    finally:
        dongle.stop()
        emulation.stop()


def test_garbage_on_a_uart_is_a_few_lines_and_every_loss_is_counted(tmp_path):
    """Garbage on a UART with no chip behind it gave 1,054 warnings in 11 s
    before exit 4: now the first "out of sync", then a count of the held ones
    at most once a second (and at each session's end), exit 4 naming the rate
    the port was at, and the metrics file counting every loss."""
    master, slave = os.openpty()
    tty = os.ttyname(slave)
    metrics = tmp_path / "uart.prom"
    stop = threading.Event()

    def noise():
        # No byte is an H4 packet type (0x01-0x05): each read of it is one framing loss.
        while not stop.is_set():
            try:
                os.write(master, bytes([0xAA, 0x55, 0xFF, 0x99, 0x42, 0x13, 0x07] * 8))
            except OSError:
                pass
            time.sleep(0.005)

    writer = threading.Thread(target=noise, daemon=True)
    dongle = Dongle("--role", "peripheral", "--transport", f"serial:{tty}", "--firmware-dir", str(tmp_path),
                    "--metrics-file", str(metrics))
    started = time.time()
    writer.start()
    try:
        assert dongle.wait_exit(60) == 4, dongle.log
        ended = time.time()
        lines = [text for _, text in dongle.lines]
        print(f"{len(lines)} lines in {ended - started:.1f} s:", *lines, sep="\n")
        assert len(lines) <= 2 * (ended - started), dongle.log
        losses = 0
        for text in lines:
            if "H4 stream out of sync, controller reset: " in text:
                losses += int(text.split("controller reset: ")[1].split(" more ")[0])
            elif "out of sync (" in text:
                losses += 1
        assert losses > 100, dongle.log
        assert framing_losses(metrics) == losses, metrics.read_text()
        # Retried at the other rate, and the last words name the rate the port was at then.
        assert dongle.count(f"did not answer at 115200 baud; trying 3000000 baud once") == 1, dongle.log
        errors = [text for text in lines if ": error: " in text]
        assert len(errors) == 1 and f"serial:{tty}@3000000" in errors[0], dongle.log
    finally:
        stop.set()
        writer.join(5)
        dongle.stop()
        os.close(master)
        os.close(slave)


# ------------------------------------------------- the board decides
# One fake device tree per board, laid out as /proc/device-tree (NUL-ended
# strings, `compatible` a NUL-separated list, cells big-endian). The facts,
# each from its source:
# - model, compatible, aliases and uart0_pins: Raspberry Pi's kernel trees
#   (raspberrypi/linux arch/arm/boot/dts/broadcom/): bcm2710-rpi-3-b.dts and
#   bcm2710-rpi-3-b-plus.dts `uart0_pins` <32 33> (TX, RX), bcm2708-rpi-zero-w.dts
#   and bcm2710-rpi-zero-2-w.dts <30 31 32 33> (with CTS, RTS),
#   bcm2711-rpi-4-b.dts <32 33> (the 400's and CM4's trees are bcm2711's too:
#   taken as the 4B's); the 3A+ boots the 3B+'s tree (its own compatible as the
#   upstream bcm2837-rpi-3-a-plus.dts names it); serial1 = uart0 (the PL011)
#   in each. The Pi 5 (bcm2712-rpi-5-b.dts) has no gpio@7e200000: its
#   Bluetooth node (aliases/bluetooth) has max-speed 3000000 and its UART
#   `uart-has-rtscts`.
# - the rate and flow control: Raspberry Pi's btuart (RPi-Distro/pi-bluetooth):
#   PL011 with four uart0_pins → 3000000 flow, two → 921600 noflow, the
#   mini-UART → 460800 noflow.
# - the chip each board carries and its file: Raspberry Pi OS's bluez-firmware
#   (RPi-Distro/bluez-firmware, debian/bluez-firmware.links, 1.2-9+rpt3);
#   Debian 13's bluez-firmware 1.2-13 ships brcm/BCM43430A1.hcd,
#   BCM43430B0.hcd, BCM4345C0.hcd and BCM4345C5.hcd and no links.
PL011, MINI_UART = "/soc/serial@7e201000", "/soc/serial@7e215040"
TWO_PINS, FOUR_PINS = struct.pack(">2I", 32, 33), struct.pack(">4I", 30, 31, 32, 33)
BOARDS = {  # name: (model, compatible, uart0_pins or None (Pi 5), serial1, chip, (rate, flow))
    "3B": ("Raspberry Pi 3 Model B Rev 1.2", "raspberrypi,3-model-b", TWO_PINS, PL011, "bcm43430a1", (921600, False)),
    "ZeroW": ("Raspberry Pi Zero W Rev 1.1", "raspberrypi,model-zero-w", FOUR_PINS, PL011, "bcm43430a1", (3000000, True)),
    "3A+": ("Raspberry Pi 3 Model A Plus Rev 1.0", "raspberrypi,3-model-a-plus", TWO_PINS, PL011, "bcm4345c0",
            (921600, False)),
    "3B+": ("Raspberry Pi 3 Model B Plus Rev 1.3", "raspberrypi,3-model-b-plus", TWO_PINS, PL011, "bcm4345c0",
            (921600, False)),
    "3B+miniuart-bt": ("Raspberry Pi 3 Model B Plus Rev 1.3", "raspberrypi,3-model-b-plus", TWO_PINS, MINI_UART,
                       "bcm4345c0", (460800, False)),
    "Zero2W": ("Raspberry Pi Zero 2 W Rev 1.0", "raspberrypi,model-zero-2-w", FOUR_PINS, PL011, "bcm43430a1",
               (3000000, True)),
    "4B": ("Raspberry Pi 4 Model B Rev 1.4", "raspberrypi,4-model-b", TWO_PINS, PL011, "bcm4345c0", (921600, False)),
    "400": ("Raspberry Pi 400 Rev 1.0", "raspberrypi,400", TWO_PINS, PL011, "bcm4345c5", (921600, False)),
    "CM4": ("Raspberry Pi Compute Module 4 Rev 1.0", "raspberrypi,4-compute-module", TWO_PINS, PL011, "bcm4345c0",
            (921600, False)),
    "CM4-43456": ("Raspberry Pi Compute Module 4 Rev 1.0", "raspberrypi,4-compute-module", TWO_PINS, PL011,
                  "bcm4345c5", (921600, False)),
    "5": ("Raspberry Pi 5 Model B Rev 1.0", "raspberrypi,5-model-b", None, None, "bcm4345c0", (3000000, True)),
}
SOC = {"bcm2835": ("raspberrypi,model-zero-w",), "bcm2712": ("raspberrypi,5-model-b",),
       "bcm2711": ("raspberrypi,4-model-b", "raspberrypi,400", "raspberrypi,4-compute-module")}
# Raspberry Pi OS's links, as dh_link installs them (relative).
PIOS_LINKS = {
    "BCM43430A1.raspberrypi,3-model-b.hcd": "BCM43430A1.hcd",
    "BCM43430A1.raspberrypi,model-zero-w.hcd": "BCM43430A1.hcd",
    "BCM4345C0.raspberrypi,3-model-a-plus.hcd": "BCM4345C0.hcd",
    "BCM4345C0.raspberrypi,3-model-b-plus.hcd": "BCM4345C0.hcd",
    "BCM4345C0.raspberrypi,4-compute-module.hcd": "BCM4345C0.hcd",
    "BCM4345C0.raspberrypi,4-model-b.hcd": "BCM4345C0.hcd",
    "BCM4345C0.raspberrypi,5-model-b.hcd": "BCM4345C0.hcd",
    "BCM4345C5.raspberrypi,4-compute-module.hcd": "BCM4345C5.hcd",
    "BCM4345C5.raspberrypi,400.hcd": "BCM4345C5.hcd",
    "BCM43430A1.raspberrypi,model-zero-2-w.hcd": "../synaptics/SYN43430A1.hcd",
    "BCM43430B0.raspberrypi,model-zero-2-w.hcd": "../synaptics/SYN43430B0.hcd",
}
# Small made-up files, each of its own length, so the one read is known by its record count.
DEBIAN_FILES = {"brcm/BCM43430A1.hcd": 1, "brcm/BCM43430B0.hcd": 2, "brcm/BCM4345C0.hcd": 3, "brcm/BCM4345C5.hcd": 4}
PIOS_FILES = {**DEBIAN_FILES, "brcm/BCM4343A2.hcd": 5, "synaptics/SYN43430A1.hcd": 6, "synaptics/SYN43430B0.hcd": 7}


def fake_tree(root, board):
    model, compatible, pins, serial1, _, _ = BOARDS[board]
    soc = next((s for s, boards in SOC.items() if compatible in boards), "bcm2837")
    files = {"model": model.encode() + b"\0", "compatible": f"{compatible}\0brcm,{soc}\0".encode()}
    if pins is None:  # the Pi 5: BCM2712, no BCM2835 GPIO block
        node = "soc@107c000000/serial@7d50c000"
        files.update({"aliases/bluetooth": f"/{node}/bluetooth\0".encode(),
                      f"{node}/uart-has-rtscts": b"", f"{node}/bluetooth/max-speed": struct.pack(">I", 3000000)})
    else:
        files.update({"aliases/uart0": PL011.encode() + b"\0", "aliases/serial1": serial1.encode() + b"\0",
                      "soc/gpio@7e200000/uart0_pins/brcm,pins": pins})
    for name, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    return root


def fake_firmware(root, layout):
    for name, n in (PIOS_FILES if layout == "pios" else DEBIAN_FILES).items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        with open(os.path.join(root, name), "wb") as f:
            f.write(synthetic_hcd(n))
    if layout == "pios":
        for link, target in PIOS_LINKS.items():
            os.symlink(target, os.path.join(root, "brcm", link))
    return root


def linux_opens(firmware, chip, board):
    """btbcm_initialize's names on a UART (the board's name, then without; the chip's, then BCM): the first there."""
    names = [f"{chip}.{board}.hcd", f"{chip}.hcd", f"BCM.{board}.hcd", "BCM.hcd"]
    return next(os.path.join(firmware, "brcm", n) for n in names if os.path.exists(os.path.join(firmware, "brcm", n)))


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_broadcom_pi_board_picks_rate_flow_and_file(board, workdir):
    """Each board's tree, Raspberry Pi OS's files: the port's termios (read from
    the pseudo-terminal opened again) has the board's flow control from the
    start and its rate after the set-up, the choice is logged once with its
    reason, and the file read is the one Linux opens on that board."""
    import termios
    model, compatible, _, _, chip, (rate, flow) = BOARDS[board]
    tree = fake_tree(os.path.join(workdir, "tree"), board)
    firmware = fake_firmware(os.path.join(workdir, "firmware"), "pios")
    name = chip.upper()
    want = linux_opens(firmware, name, compatible)
    # The emulated ROM checks every record against the file Linux opens.
    expect = os.path.join(workdir, "expect", "brcm")
    os.makedirs(expect)
    with open(want, "rb") as src, open(os.path.join(expect, f"{name}.hcd"), "wb") as dst:
        dst.write(src.read())
    emulation, tty = uart_emulation(chip, os.path.dirname(expect), workdir, "board")
    dongle = Dongle("--role", "peripheral", "--transport", f"serial:{tty}", "--device-tree", tree,
                    "--firmware-dir", firmware)
    try:
        dongle.wait_for(f"now at {rate} baud", timeout=30)
        attrs = termios.tcgetattr(os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK))
        assert (bool(attrs[2] & termios.CRTSCTS), attrs[5]) == (flow, getattr(termios, f"B{rate}")), board
        assert emulation.errors() == []
        assert dongle.count(f"loading {want}") == 1, dongle.log
        assert dongle.count(f"{rate} baud {'with RTS/CTS' if flow else 'without flow control'} once the chip is set up: "
                            f"{model}") == 1, dongle.log
        assert dongle.count("once the chip is set up") == 1, "logged once"
    finally:
        dongle.stop()
        emulation.stop()


@pytest.mark.parametrize("layout", ["debian13", "pios"])
def test_broadcom_list_controllers_names_the_boards_file(layout, workdir):
    """--list-controllers' UART row, for every board and both packages' files:
    the file Linux opens for the board's chip, found through the links."""
    firmware = fake_firmware(os.path.join(workdir, "firmware"), layout)
    tty = os.path.join(workdir, "serial1")
    open(tty, "w").close()
    for board, (_, compatible, _, _, chip, _) in sorted(BOARDS.items()):
        tree = fake_tree(os.path.join(workdir, f"tree-{board}"), board)
        listing = Dongle("--list-controllers", "--transport", f"serial:{tty}", "--device-tree", tree,
                         "--firmware-dir", firmware)
        assert listing.wait_exit(10) == 0, listing.log
        row = next(line for _, line in listing.lines if line.startswith("UART"))
        assert f"{chip.upper()}: {linux_opens(firmware, chip.upper(), compatible)} (present)" in row, (board, row)


# ------------------------------------------- the radio's power line
# A fake gpiochip (Tests/PythonSupport/fake_gpiochip.c, LD_PRELOAD over
# ioctl(2)): no GPIO simulator here (this machine's kernel has no modules; the
# USB guest's Debian 6.1 kernel has neither CONFIG_GPIO_SIM nor
# CONFIG_GPIO_MOCKUP). It answers the GPIO character device's uAPI v2 ioctls
# for the regular files named gpiochipN in $ITCB_GPIOCHIP_DIR and logs each.
# The Pi 4's line names, from its tree (raspberrypi/linux and mainline
# bcm2711-rpi-4-b.dts): the firmware GPIO expander (`&expgpio`) names its
# line 0 "BT_ON", the Bluetooth node's `shutdown-gpios = <&expgpio 0
# GPIO_ACTIVE_HIGH>`; the SoC's own chip (gpiochip0 here, a few of its
# names) has no BT_ON.
PI4_CHIPS = {"gpiochip0": "ID_SDA,ID_SCL,SDA1,SCL1,GPIO_GCLK",
             "gpiochip1": "BT_ON,WL_ON,PWR_LED_OFF,GLOBAL_RESET,VDD_SD_IO_SEL,CAM_GPIO,SD_PWR_ON,SD_OC_N"}


def fake_gpiochips(workdir, chips):
    """The shim built once per test, the chips' files, and the environment that puts them in place."""
    import subprocess
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "PythonSupport")
    shim = os.path.join(workdir, "fake_gpiochip.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", shim, os.path.join(here, "fake_gpiochip.c"), "-ldl"],
                   check=True)
    directory = os.path.join(workdir, "dev")
    os.makedirs(directory)
    for chip in chips:
        open(os.path.join(directory, chip), "w").close()
    log = os.path.join(workdir, "gpio.log")
    env = {"LD_PRELOAD": shim, "ITCB_GPIOCHIP_DIR": directory, "FAKE_GPIO_LOG": log,
           "FAKE_GPIO_CHIPS": ";".join(f"{chip}={names}" for chip, names in chips.items())}
    return env, log


def gpio_log(path):
    """(time, operation, rest of the line) for each ioctl the fake gpiochip answered."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(float(t), op, rest) for t, op, rest in (line.rstrip("\n").split(" ", 2) for line in f if line.strip())]


def wedged_pi4(workdir, firmware_dir, chips):
    """The Pi 4's chip on a pseudo-terminal, silent at every rate until its power line goes low."""
    env, log = fake_gpiochips(workdir, chips)
    tty = os.path.join(workdir, "pi4-tty")
    emulation = VendorEmulation("bcm4345c0", os.path.join(workdir, "pi4.hex"), "--firmware-dir", firmware_dir,
                                "--pty", tty, "--wedged", "--power-log", log)
    tree = fake_tree(os.path.join(workdir, "tree"), "4B")
    return emulation, tty, tree, env, log


def test_broadcom_pi_radio_left_mid_download_is_power_cycled(firmware_dir, workdir):
    """A chip silent at 115200 and at the board's 921600 (left mid-download):
    the program finds BT_ON by name on the second gpiochip, requests it as an
    output driven low, drives it high 100 ms later (Linux hci_bcm's wait), and
    waits 100 ms more before the first command (the emulated chip counts a
    command sooner as an error); the chip, reset by the low pulse, is patched
    at 115200, then 921600, and answers 20 questions. No reboot."""
    emulation, tty, tree, env, log = wedged_pi4(workdir, firmware_dir, PI4_CHIPS)
    dongle = Dongle("--role", "peripheral", "--name", "PiCycled", "--transport", f"serial:{tty}", "--device-tree", tree,
                    "--firmware-dir", firmware_dir, env=env)
    try:
        dongle.wait_for("info: advertising", timeout=90)
        assert dongle.count("the radio's power line is BT_ON (") == 1, dongle.log
        assert dongle.count("gpiochip1 line 0)") >= 1, dongle.log
        assert dongle.count("did not answer at 115200 baud; trying 921600 baud once") == 1, dongle.log
        assert dongle.count("did not answer at 115200 baud nor at 921600 (a chip left mid-download, or wedged); "
                            "power-cycling it through BT_ON") == 1, dongle.log
        assert dongle.count("Broadcom BCM4345C0: patchram loaded") == 1, dongle.log
        ops = gpio_log(log)
        writes = [(t, op, rest) for t, op, rest in ops if op in ("REQUEST", "SET", "REFUSED")]
        # uAPI v2: chip info and line names first (BT_ON is not on gpiochip0), then one request
        # as an output (GPIO_V2_LINE_FLAG_OUTPUT 0x8) driven low, then high.
        assert [op for _, op, _ in ops[:2]] == ["CHIPINFO", "LINEINFO"], ops
        assert [(op, rest) for _, op, rest in writes] == [("REQUEST", "gpiochip1 0 8 0 itcb-dongle"),
                                                          ("SET", "gpiochip1 0 1")], ops
        assert writes[1][0] - writes[0][0] >= 0.1, "the line was low less than 100 ms"
        assert emulation.errors() == [], emulation.errors()  # nothing sent within 100 ms of power on
        rates = emulation.rates()
        assert rates[0] == (command(0x0C03), 115200), rates[:3]
        check_uart_setup(rates, os.path.join(firmware_dir, "brcm", "BCM4345C0.hcd"), 921_600)
        twenty_answers(emulation.ports[1], "PiCycled", "after a power cycle")
    finally:
        dongle.stop()
        emulation.stop()


@pytest.mark.parametrize("case", ["no-line", "held", "not-a-pi"])
def test_broadcom_wedged_radio_without_a_power_line_exits_4(case, firmware_dir, workdir):
    """No BT_ON (a board whose chips name none), BT_ON held by the kernel's
    driver (hci_uart's serdev still bound: the request would fail EBUSY), or
    no Raspberry Pi: one info line says why, at start; the ladder is as
    before (the other rate once, then exit 4), and the line is never requested."""
    chips = {"no-line": {"gpiochip0": "ID_SDA,ID_SCL"},
             "held": {"gpiochip0": "BT_ON@hci_uart,WL_ON"},
             "not-a-pi": PI4_CHIPS}[case]
    emulation, tty, tree, env, log = wedged_pi4(workdir, firmware_dir, chips)
    args = ("--role", "peripheral", "--transport", f"serial:{tty}", "--firmware-dir", firmware_dir)
    if case != "not-a-pi":
        args += ("--device-tree", tree)
    else:
        empty = os.path.join(workdir, "no-tree")
        os.makedirs(empty)
        args += ("--device-tree", empty)
    dongle = Dongle(*args, env=env)
    try:
        assert dongle.wait_exit(60) == 4, dongle.log
        why = {"no-line": "no GPIO line named BT_ON on ",
               "held": "BT_ON on " + os.path.join(workdir, "dev", "gpiochip0") + " line 0 is held by hci_uart",
               "not-a-pi": "no device tree at "}[case]
        assert dongle.count("no power line to cycle (") == 1, dongle.log
        assert dongle.count("no power line to cycle (" + why) == 1, dongle.log
        assert dongle.count("trying 921600 baud once" if case != "not-a-pi" else "trying 3000000 baud once") == 1, \
            dongle.log
        assert dongle.count("power-cycling") == 0, dongle.log
        assert [op for _, op, _ in gpio_log(log) if op in ("REQUEST", "SET")] == [], gpio_log(log)
    finally:
        dongle.stop()
        emulation.stop()


def test_broadcom_pi_radio_that_stops_answering_mid_run_is_power_cycled(firmware_dir, workdir):
    """The recovery ladder on the Pi's UART: the chip answers, is patched and
    advertises, then stops answering (SIGUSR1 to the emulation: wedged). The
    health probe goes unanswered, then the HCI Reset; the second rung is a
    power cycle (not the other rate), the chip is patched again from 115200
    and advertises again; the line was requested once, low, then high."""
    import signal
    env, log = fake_gpiochips(workdir, PI4_CHIPS)
    tty = os.path.join(workdir, "pi4-tty")
    emulation = VendorEmulation("bcm4345c0", os.path.join(workdir, "pi4.hex"), "--firmware-dir", firmware_dir,
                                "--pty", tty, "--power-log", log)
    tree = fake_tree(os.path.join(workdir, "tree"), "4B")
    dongle = Dongle("--role", "peripheral", "--name", "PiLadder", "--transport", f"serial:{tty}", "--device-tree", tree,
                    "--firmware-dir", firmware_dir, "--health-check", "1", env=env)
    try:
        first = dongle.wait_for("info: advertising", timeout=60)
        assert gpio_log(log) and all(op in ("CHIPINFO", "LINEINFO") for _, op, _ in gpio_log(log)), gpio_log(log)
        os.killpg(emulation.process.pid, signal.SIGUSR1)
        dongle.wait_for("did not answer after its HCI Reset either; power-cycling it through BT_ON", timeout=60,
                        after=first)
        dongle.wait_for("info: advertising", timeout=60, count=2)
        assert dongle.count("Broadcom BCM4345C0: patchram loaded") == 2, dongle.log
        assert dongle.count("trying 921600 baud once") == 0, dongle.log
        writes = [(t, op, rest) for t, op, rest in gpio_log(log) if op in ("REQUEST", "SET", "REFUSED")]
        assert [(op, rest) for _, op, rest in writes] == [("REQUEST", "gpiochip1 0 8 0 itcb-dongle"),
                                                          ("SET", "gpiochip1 0 1")], writes
        assert emulation.errors() == [], emulation.errors()
        twenty_answers(emulation.ports[1], "PiLadder", "after the ladder's power cycle")
    finally:
        dongle.stop()
        emulation.stop()
