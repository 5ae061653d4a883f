"""Intel firmware loading, proven against the real ibt-* files of Debian's
firmware-iwlwifi (scripts/firmware-files.sh) and an emulated Intel bootloader
(Tests/PythonSupport/vendor_controller.py: the Intel personality of
Tests/PythonSupport/personalities.py in front of a Bumble controller, H4 over TCP).
The emulation checks every Secure Send fragment against the file and only
boots on the file's boot address; its protocol errors go to a file that every
test reads.

Reference: Bumble's own Intel driver (bumble.drivers.intel, a stack nobody
here wrote) loads through the same emulation, and its command sequence is
checked against the protocol. Differential: itcb-dongle loads the same file
through the same emulation; from Intel Read Version to the last DDC write the
commands are identical byte for byte (before it, Bumble's driver sends HCI
Reset, ours HCI Reset and Read Local Version: the probe that finds
manufacturer 2 on a TCP transport). Then 20 questions over the booted
controller, a missing file, broken files and a warm start."""
import os
import struct
import subprocess
import sys

import pytest
from harness import REPO, Dongle, VendorEmulation, run_peripheral_once, twenty_answers

SUPPORT = os.path.join(REPO, "Tests", "PythonSupport")
REFERENCE = os.path.join(SUPPORT, "bumble_driver_reference.py")

TLV_FILES = {"ax210": "ibt-0041-0041", "ax211": "ibt-0040-0041"}
LEGACY_FILES = {"8265": "ibt-12-16", "9560": "ibt-17-16-1", "ax201": "ibt-19-0-4", "ax200": "ibt-20-1-3"}
DISPLAY = {"ax210": "AX210", "ax211": "AX211", "8265": "8265", "9560": "9460/9560", "ax200": "AX200", "ax201": "AX201"}
# engine → ((css offset, size), (pki offset, size), (signature offset, size), payload offset)
HEADERS = {"rsa": ((0, 128), (128, 256), (388, 256), 964), "ecdsa": ((644, 128), (772, 96), (868, 96), 964),
           "legacy": ((0, 128), (128, 256), (388, 256), 644)}
RESET, READ_LOCAL_VERSION = 0x0C03, 0x1001
READ_VERSION, READ_BOOT_PARAMS, SECURE_SEND, INTEL_RESET, WRITE_DDC = 0xFC05, 0xFC0D, 0xFC09, 0xFC01, 0xFC8B


def opcode(packet):
    return packet[1] | packet[2] << 8


def params(packet):
    return packet[4:4 + packet[3]]


def Emulation(chip, firmware_dir, workdir, tag, engine=None, fw_id=None):
    return VendorEmulation(chip, os.path.join(workdir, f"{tag}.hex"), "--firmware-dir", firmware_dir,
                           *(["--engine", engine] if engine else []), *(["--fw-id", fw_id.hex()] if fw_id else []))


def download_phase(commands):
    """From the first Intel Read Version to the last DDC write that follows the
    Intel Reset (the loader's part), and what came before it."""
    first = next((i for i, c in enumerate(commands) if opcode(c) == READ_VERSION), None)
    assert first is not None, f"no Intel Read Version among {len(commands)} commands"
    reset = next((i for i, c in enumerate(commands) if opcode(c) == INTEL_RESET), None)
    assert reset is not None, f"no Intel Reset among {len(commands)} commands"
    end = reset + 1
    while end < len(commands) and opcode(commands[end]) == WRITE_DDC:
        end += 1
    return commands[:first], commands[first:end]


def expected_secure_sends(image, layout):
    """(type, data) per Secure Send as the protocol describes it, and the boot address."""
    css, pki, sig, start = HEADERS[layout]
    sends, boot_address = [], None

    def fragments(kind, data):
        sends.extend((kind, data[i:i + 252]) for i in range(0, len(data), 252))

    fragments(0x00, image[css[0]:css[0] + css[1]])
    fragments(0x03, image[pki[0]:pki[0] + pki[1]])
    fragments(0x02, image[sig[0]:sig[0] + sig[1]])
    offset, group = start, 0
    while offset + group + 3 <= len(image):
        code, size = struct.unpack_from("<HB", image, offset + group)
        if code == 0xFC0E:
            boot_address = struct.unpack_from("<I", image, offset + group + 3)[0]
        group += 3 + size
        if group % 4 == 0:
            fragments(0x01, image[offset:offset + group])
            offset, group = offset + group, 0
    assert offset == len(image), "the file's payload does not end on a 4-byte group"
    return sends, boot_address


def ddc_records(path):
    with open(path, "rb") as f:
        data = f.read()
    records = []
    while data:
        records.append(data[:1 + data[0]])
        data = data[1 + data[0]:]
    return records


def check_protocol(phase, firmware_dir, name, layout, read_version_param=b"\xff", boot_params=False):
    """The loader's part is exactly what the protocol section says (8260/8265,
    ibt-11-*/ibt-12-*: Intel Reset at address 0, as Linux sends it)."""
    with open(os.path.join(firmware_dir, "intel", name + ".sfi"), "rb") as f:
        sends, boot_address = expected_secure_sends(f.read(), layout)
    if name.startswith(("ibt-11-", "ibt-12-")):
        boot_address = 0
    records = ddc_records(os.path.join(firmware_dir, "intel", name + ".ddc"))
    i = 0
    assert opcode(phase[i]) == READ_VERSION and params(phase[i]) == read_version_param
    i += 1
    if boot_params:
        assert opcode(phase[i]) == READ_BOOT_PARAMS and params(phase[i]) == b""
        i += 1
    got = [(params(c)[0], params(c)[1:]) for c in phase[i:i + len(sends)]]
    assert all(opcode(c) == SECURE_SEND for c in phase[i:i + len(sends)])
    assert len(got) == len(sends) and got == sends, "Secure Sends differ from the file's layout"
    i += len(sends)
    assert opcode(phase[i]) == INTEL_RESET and params(phase[i]) == bytes([0, 1, 0, 1]) + struct.pack("<I", boot_address)
    i += 1
    assert [params(c) for c in phase[i:]] == records and all(opcode(c) == WRITE_DDC for c in phase[i:])


def run_bumble(chip, firmware_dir, workdir, engine=None):
    emulation = Emulation(chip, firmware_dir, workdir, f"bumble-{chip}-{engine}", engine)
    try:
        out = subprocess.run([sys.executable, REFERENCE, "intel", str(emulation.ports[0])], capture_output=True, text=True,
                             timeout=120,
                             env={**os.environ, "BUMBLE_INTEL_FIRMWARE_DIR": os.path.join(firmware_dir, "intel")})
        assert "DONE" in out.stdout, f"Bumble's intel driver failed:\n{out.stdout}\n{out.stderr}"
        assert emulation.errors() == []
        return emulation.commands()
    finally:
        emulation.stop()


def run_ours(chip, firmware_dir, workdir, engine=None):
    emulation = Emulation(chip, firmware_dir, workdir, f"ours-{chip}-{engine}", engine)
    dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}",
                    "--firmware-dir", firmware_dir)
    try:
        dongle.wait_for("info: advertising", timeout=60)
        name = DISPLAY[chip]
        path = os.path.join(firmware_dir, "intel", (TLV_FILES | LEGACY_FILES)[chip] + ".sfi")
        assert dongle.count(f"Intel {name}: loading {path}") == 1, dongle.log
        assert dongle.count(f"Intel {name}: firmware loaded (") == 1, dongle.log
        assert emulation.errors() == []
        return emulation.commands()
    finally:
        dongle.stop()
        emulation.stop()


ENGINES = [("ax210", "rsa"), ("ax210", "ecdsa"), ("ax211", "rsa"), ("ax211", "ecdsa")]


@pytest.mark.parametrize("chip,engine", ENGINES)
def test_intel_bumble_reference_follows_protocol(chip, engine, firmware_dir, workdir):
    """Bumble's driver through the emulation: the emulation accepts it, and what
    it sends is the protocol (this proves the emulation against Bumble)."""
    before, phase = download_phase(run_bumble(chip, firmware_dir, workdir, engine))
    assert [opcode(c) for c in before] == [RESET]
    check_protocol(phase, firmware_dir, TLV_FILES[chip], engine)


@pytest.mark.parametrize("chip,engine", ENGINES)
def test_intel_differential_with_bumble_driver(chip, engine, firmware_dir, workdir):
    their_before, theirs = download_phase(run_bumble(chip, firmware_dir, workdir, engine))
    our_before, ours = download_phase(run_ours(chip, firmware_dir, workdir, engine))
    assert [opcode(c) for c in their_before] == [RESET]
    assert [opcode(c) for c in our_before] == [RESET, READ_LOCAL_VERSION], [c.hex() for c in our_before]
    assert len(ours) == len(theirs), f"{len(ours)} commands, Bumble sent {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"command {i} differs:\n ours   {a.hex()[:120]}\n Bumble {b.hex()[:120]}"
    check_protocol(ours, firmware_dir, TLV_FILES[chip], engine)


@pytest.mark.parametrize("chip", sorted(LEGACY_FILES))
def test_intel_legacy_bootloader_loads(chip, firmware_dir, workdir):
    """Bumble has no driver for these; the protocol (Linux btintel's order) is the reference."""
    our_before, ours = download_phase(run_ours(chip, firmware_dir, workdir))
    assert [opcode(c) for c in our_before] == [RESET, READ_LOCAL_VERSION]
    check_protocol(ours, firmware_dir, LEGACY_FILES[chip], "legacy", boot_params=True)


def test_intel_answers_20_questions(firmware_dir, workdir):
    emulation = Emulation("ax210", firmware_dir, workdir, "20q")
    dongle = Dongle("--role", "peripheral", "--name", "IntlBall", "--transport",
                    f"tcp:127.0.0.1:{emulation.ports[0]}", "--firmware-dir", firmware_dir)
    try:
        dongle.wait_for("info: advertising", timeout=60)

        twenty_answers(emulation.ports[1], "IntlBall", "Intel question")
        assert dongle.count("Intel AX210: firmware loaded (") == 1
        assert emulation.errors() == []
    finally:
        dongle.stop()
        emulation.stop()


def run_binary(emulation, firmware_dir):
    return run_peripheral_once(emulation.ports[0], firmware_dir)


def refused(emulation, firmware_dir):
    """Runs our peripheral against the emulated chip once: it must end with exit 4
    and one error line (returned), having sent no Secure Send."""
    try:
        out = run_binary(emulation, firmware_dir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    assert "\x1b" not in out.stderr, out.stderr
    errors = [l for l in out.stderr.splitlines() if "error" in l]
    assert len(errors) == 1, out.stderr
    assert not any(opcode(c) == SECURE_SEND for c in emulation.commands())
    return errors[0]


def test_intel_missing_firmware_exit_4(firmware_dir, workdir):
    os.makedirs(os.path.join(workdir, "intel"))
    error = refused(Emulation("ax210", firmware_dir, workdir, "missing"), workdir)
    assert f"{workdir}/intel/ibt-0041-0041.sfi" in error and "firmware-iwlwifi" in error \
        and "non-free-firmware" in error


def broken_copy(firmware_dir, workdir, name, mutate):
    os.makedirs(os.path.join(workdir, "intel"), exist_ok=True)
    with open(os.path.join(firmware_dir, "intel", name + ".sfi"), "rb") as f:
        data = bytearray(f.read())
    with open(os.path.join(workdir, "intel", name + ".sfi"), "wb") as f:
        f.write(mutate(data))
    return os.path.join(workdir, "intel", name + ".sfi")


def truncated(data):
    """Cut in the middle of a payload command: the last command is incomplete."""
    cut = len(data) // 2
    pos = 964
    while pos + 3 + data[pos + 2] <= cut:
        pos += 3 + data[pos + 2]
    return bytes(data[:pos + 2 + (data[pos + 2] // 2)])


def bad_length(data):
    """The first payload command's length byte one larger. In ibt-0041-0041 the
    walk happens to end with the file again, but through commands that are not
    vendor commands (every real .sfi payload holds only 0xFC8E/0xFC02/0xFC0E)."""
    data[964 + 2] = (data[964 + 2] + 1) & 0xFF
    return bytes(data)


def no_boot_params(data):
    """The Write Boot Params command (0xFC0E) renamed to 0xFC8E: the Intel Reset
    would have no boot address."""
    pos = 964
    while struct.unpack_from("<H", data, pos)[0] != 0xFC0E:
        pos += 3 + data[pos + 2]
    data[pos + 1] = 0xFC
    data[pos] = 0x8E
    return bytes(data)


@pytest.mark.parametrize("mutate", [truncated, bad_length, no_boot_params],
                         ids=["truncated", "bad-length", "no-boot-params"])
def test_intel_broken_firmware_exit_4_before_sending(mutate, firmware_dir, workdir):
    path = broken_copy(firmware_dir, workdir, "ibt-0041-0041", mutate)
    emulation = Emulation("ax210", firmware_dir, workdir, "broken")
    try:
        out = run_binary(emulation, workdir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    assert "Intel AX210: firmware load failed" in out.stderr and path in out.stderr, out.stderr
    assert not any(opcode(c) == SECURE_SEND for c in emulation.commands())


def test_intel_corrupted_payload_fails_on_the_chip_exit_4(firmware_dir, workdir):
    """Bytes changed inside a command: only the chip can tell (vendor event 0x06
    with result 1); the load fails and nothing boots."""
    def flip(data):
        data[len(data) // 2] ^= 0xFF
        return bytes(data)

    broken_copy(firmware_dir, workdir, "ibt-0041-0041", flip)
    emulation = Emulation("ax210", firmware_dir, workdir, "corrupt")
    try:
        out = run_binary(emulation, workdir)
    finally:
        emulation.stop()
    assert out.returncode == 4, out.stderr
    assert "Intel AX210: firmware load failed" in out.stderr, out.stderr
    assert any("differ" in e for e in emulation.errors()), emulation.errors()
    assert not any(opcode(c) == INTEL_RESET for c in emulation.commands())


def test_intel_warm_start_skips_download(firmware_dir, workdir):
    """A controller already running its firmware says so in Read Version: the
    next start reads it and downloads nothing."""
    emulation = Emulation("ax210", firmware_dir, workdir, "warm")
    args = ("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{emulation.ports[0]}", "--firmware-dir", firmware_dir)
    try:
        first = Dongle(*args)
        first.wait_for("info: advertising", timeout=60)
        first.stop()
        count = len(emulation.commands())
        sends = sum(1 for c in emulation.commands() if opcode(c) == SECURE_SEND)
        second = Dongle(*args)
        try:
            second.wait_for("info: advertising", timeout=30)
            assert second.count("firmware loaded") == 0 and second.count("loading") == 0, second.log
        finally:
            second.stop()
        later = emulation.commands()[count:]
        assert any(opcode(c) == READ_VERSION for c in later), "the second start did not ask the chip"
        assert not any(opcode(c) in (SECURE_SEND, INTEL_RESET, WRITE_DDC) for c in later)
        assert sum(1 for c in emulation.commands() if opcode(c) == SECURE_SEND) == sends > 0
        assert emulation.errors() == []
    finally:
        emulation.stop()


def blazar_files(firmware_dir, workdir, *names):
    """Stand-ins for BlazarI's files (Debian 13's firmware-iwlwifi 20250410-2 ships
    intel/ibt-0190-0041-iml.sfi, ibt-0190-0041-usb.sfi, -pci.sfi and the plain
    ibt-0190-0041.sfi; the cached files are Debian 12's): AX210's bytes under those
    names, for the emulation to check a download against. None may be sent."""
    os.makedirs(os.path.join(workdir, "intel"), exist_ok=True)
    with open(os.path.join(firmware_dir, "intel", "ibt-0041-0041.sfi"), "rb") as f:
        data = f.read()
    for name in names:
        with open(os.path.join(workdir, "intel", name), "wb") as f:
            f.write(data)


def test_intel_variant_0x1e_boot_loader_refused_naming_its_intermediate_loader(firmware_dir, workdir):
    """Hardware variant 0x1e (BlazarI): Linux loads ibt-<cnvi>-<cnvr>-iml.sfi into the
    boot loader, boots it and loads the firmware it names (btintel_get_fw_name_tlv,
    btintel_bootloader_setup_tlv). That step is not ours yet: one line naming the
    file, exit 4, nothing sent; the plain-named file beside it is not loaded."""
    blazar_files(firmware_dir, workdir, "ibt-0190-0041-iml.sfi", "ibt-0190-0041.sfi")
    emulation = Emulation("be202", workdir, workdir, "blazar")
    error = refused(emulation, workdir)
    assert error.endswith("Intel BE202: firmware load failed: this chip boots an intermediate loader before its "
                          "firmware, a step not supported yet: it needs intel/ibt-0190-0041-iml.sfi first, then "
                          "the firmware file that loader names"), error
    assert emulation.errors() == []


def test_intel_intermediate_loader_named_by_its_firmware_id_escaped(firmware_dir, workdir):
    """Found running its intermediate loader, the chip's firmware id (TLV 0x50) names
    the file Linux loads from there; it is the controller's text, so the line shows
    it escaped (UntrustedText): a terminal's escape sequence stays visible text."""
    fw_id = b"usb\x1b[2J"
    blazar_files(firmware_dir, workdir, "ibt-0190-0041-usb\x1b[2J.sfi")
    error = refused(Emulation("be202", workdir, workdir, "iml", fw_id=fw_id + b"\0"), workdir)
    assert error.endswith("Intel BE202: firmware load failed: controller is in its intermediate loader (not "
                          "supported): Linux loads intel/ibt-0190-0041-usb\\x1b[2J.sfi from there"), error
