"""Vendor personalities: what an un-patched Realtek ROM, an Intel bootloader,
a Broadcom ROM (class Broadcom: patchram) or a MediaTek chip without its RAM
code (class MediaTek: WMT)
answers before its firmware is loaded, and what it checks while it is loaded.

Python stdlib only: this module also runs inside the QEMU guest of the USB
fixture (system python3, no Bumble). A personality sees every HCI command the
host sends (opcode + length + parameters, no H4 type byte) and either answers
it itself or returns None: "forward it to the real (Bumble) controller".

    p = make("ax210", firmware_dir)        # DIR holding intel/ (and rtl_bt/)
    replies = p.on_command(command, via_bulk=False)
    # None, or [(endpoint, event)]: endpoint "event" (interrupt IN / H4 0x04)
    # or "bulk" (bulk IN: an Intel bootloader answers Secure Sends that came
    # on bulk OUT there); event = HCI event without the H4 type byte.

Realtek (rtl8723b … rtl8852c): until the last Download fragment it is the
un-patched ROM: it answers HCI Reset and Read Local Version Information (the
ROM's versions, manufacturer 0x005D), Read ROM Version (0xFC6D) and Download
(0xFC20: the fragment index is checked, the bytes collected in .payload).
After the last fragment every command but the vendor ones is forwarded.

Intel, two generations (see CHIPS): TLV bootloaders (AX210, AX211) and
legacy-format ones (8265, 9560, AX200, AX201). In the bootloader it answers
Reset (status 0x01 Unknown HCI Command), Read Local Version (manufacturer 2),
Intel Read Version (TLV or the 10-byte legacy struct; image type / fw variant
"bootloader"), Read Boot Params (legacy) and Secure Send, and compares every
Secure Send fragment with the real .sfi file: CSS, PKI and signature of the
chip's secure boot engine (RSA or ECDSA), then the payload, in order, byte for
byte. When the whole payload has arrived and matched it sends the vendor event
"download complete" (FF 05 06 00 09 FC 00); a mismatch sends it with result 1
and is listed in .errors. Intel Reset (checked against the file's boot
address) boots it: vendor event FF 07 02 ... and it is operational; Read
Version then says so (image type 0x03 / fw variant 0x23, and the file's build
numbers), DDC writes (0xFC8B) are recorded in .ddc_records, Set Event Mask
(0xFC52) is acknowledged, other vendor commands get Unknown HCI Command, and
everything else is forwarded. Any other command in the bootloader gets
Unknown HCI Command too (there is no link layer running).

A BlazarI boot loader (be202, hardware variant 0x1e) answers the same way, but
its file is the intermediate loader's (ibt-0190-0041-iml.sfi, as Linux names
it); with fw_id it starts in that loader instead (image type 2, TLV 0x50). The
emulation does not boot an intermediate loader into the firmware it names.

Intel Reset gets no Command Complete by default (the protocol brief of this
project); make(..., reset_complete=True) sends one before the boot event
(Linux btintel waits for one with __hci_cmd_sync)."""
import os
import struct
import time

RESET, READ_LOCAL_VERSION = 0x0C03, 0x1001

STATUS_OK, UNKNOWN_COMMAND, INVALID_PARAMETERS = 0x00, 0x01, 0x12


def command_complete(opcode, params=b""):
    """HCI Command Complete (no H4 type byte), one command credit."""
    params = bytes(params)
    return bytes([0x0E, 3 + len(params), 1, opcode & 0xFF, opcode >> 8]) + params


def vendor_event(params):
    params = bytes(params)
    return bytes([0xFF, len(params)]) + params


class Personality:
    vendor = ""
    chip = ""
    usb_id = (0, 0)
    usb_class = (0xE0, 0x01, 0x01)  # device and interface 0 (Bluetooth); over the USB fixture
    display = ""

    def __init__(self):
        self.commands = []
        self.errors = []

    @property
    def bulk_commands(self):
        return False

    def on_command(self, command, via_bulk=False):
        command = bytes(command)
        self.commands.append(command)
        if len(command) < 3 or len(command) != 3 + command[2]:
            self.errors.append(f"malformed command {command.hex()}")
            return None
        opcode = command[0] | command[1] << 8
        return self.handle(opcode, command[3:], via_bulk)

    def handle(self, opcode, params, via_bulk):
        return None

    def power_cycle(self):
        pass


# ---------------------------------------------------------------- Realtek

# chip → (HCI version, HCI revision, LMP subversion) of the un-patched ROM
# (the values Linux btrtl.c and Bumble's rtk driver match on), USB PID.
REALTEK_CHIPS = {
    "rtl8723b": (0x06, 0x000B, 0x8723, 0xB720),
    "rtl8723d": (0x08, 0x000D, 0x8723, 0xD723),
    "rtl8821c": (0x08, 0x000C, 0x8821, 0xC821),
    "rtl8761bu": (0x0A, 0x000B, 0x8761, 0x8771),
    "rtl8822b": (0x07, 0x000B, 0x8822, 0xB82C),
    "rtl8822c": (0x0A, 0x000C, 0x8822, 0xC82C),
    "rtl8852a": (0x0B, 0x000A, 0x8852, 0x885A),
    "rtl8852b": (0x0B, 0x000B, 0x8852, 0x887B),
    "rtl8852c": (0x0C, 0x000C, 0x8852, 0xC852),
}
RTK_READ_ROM_VERSION, RTK_DOWNLOAD = 0xFC6D, 0xFC20


class Realtek(Personality):
    vendor = "realtek"

    def __init__(self, chip, rom_version=None):
        super().__init__()
        self.chip = chip
        self.display = chip.upper()
        hci_version, hci_revision, lmp_subversion, pid = REALTEK_CHIPS[chip]
        self.version = (hci_version, hci_revision, lmp_subversion)
        self.usb_id = (0x0BDA, pid)
        self.rom_version = 1 if rom_version is None else rom_version
        self.power_cycle()

    def power_cycle(self):
        self.patched = False
        self.fragments = 0
        self.payload = bytearray()

    def handle(self, opcode, params, via_bulk):
        if opcode == RTK_READ_ROM_VERSION:
            return [("event", command_complete(opcode, [0, self.rom_version]))]
        if opcode == RTK_DOWNLOAD:
            return [("event", self.download(params))]
        if not self.patched and opcode == RESET:
            return [("event", command_complete(opcode, [0]))]
        if not self.patched and opcode == READ_LOCAL_VERSION:
            hci_version, hci_revision, lmp_subversion = self.version
            return [("event", command_complete(opcode, [0, hci_version, *struct.pack("<H", hci_revision), hci_version,
                                                        0x5D, 0x00, *struct.pack("<H", lmp_subversion)]))]
        return None

    def download(self, params):
        index, data = params[0], params[1:]
        i = self.fragments
        # Linux btrtl numbers fragments past 127 (i & 0x7F) + 1, Bumble i & 0x7F: both accepted.
        wanted = {i & 0x7F} if i <= 0x7F else {(i & 0x7F) + 1, i & 0x7F}
        if index & 0x7F not in wanted:
            self.errors.append(f"fragment {i}: index {index:#x}")
            return command_complete(RTK_DOWNLOAD, [INVALID_PARAMETERS, index])
        self.fragments += 1
        self.payload += data
        if index & 0x80:
            self.patched = True
        return command_complete(RTK_DOWNLOAD, [0, index])


# ---------------------------------------------------------------- Intel

INTEL_RESET, INTEL_READ_VERSION, INTEL_SECURE_SEND = 0xFC01, 0xFC05, 0xFC09
INTEL_READ_BOOT_PARAMS, INTEL_WRITE_BOOT_PARAMS = 0xFC0D, 0xFC0E
INTEL_SET_EVENT_MASK, INTEL_WRITE_DDC = 0xFC52, 0xFC8B
RSA, ECDSA = 0, 1
FRAGMENT_MAX = 252
# (offset, size) of CSS header, PKI, signature per engine, and where the payload starts.
TLV_LAYOUT = {RSA: ((0, 128), (128, 256), (388, 256), 964), ECDSA: ((644, 128), (772, 96), (868, 96), 964)}
LEGACY_LAYOUT = ((0, 128), (128, 256), (388, 256), 644)
DOWNLOAD_COMPLETE = bytes([0x06, 0x00, 0x09, 0xFC, 0x00])
DOWNLOAD_FAILED = bytes([0x06, 0x01, 0x09, 0xFC, 0x00])
BOOT_COMPLETE = bytes([0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00])

# TLV generation: CNVI_TOP, CNVR_TOP, hardware variant, device revision id, secure boot engine.
INTEL_TLV_CHIPS = {
    "ax210": dict(display="AX210", pid=0x0032, cnvi_top=0x00000410, cnvr_top=0x00000410, variant=0x17,
                  dev_rev=0x0000, engine=RSA),
    "ax211": dict(display="AX211", pid=0x0033, cnvi_top=0x00000400, cnvr_top=0x00000410, variant=0x19,
                  dev_rev=0x0000, engine=ECDSA),
    # BlazarI (hardware variant 0x1e, CNVi TOP type 0x900 step 1: ibt-0190-…): its boot loader
    # wants the intermediate loader, ibt-0190-0041-iml.sfi (Linux btintel_get_fw_name_tlv), a
    # step this emulation does not go past (nor does the program yet). An integrated (CNVi)
    # part: no USB id is known here.
    "be202": dict(display="BE202", pid=0x0000, cnvi_top=0x01000900, cnvr_top=0x00000410, variant=0x1E,
                  dev_rev=0x0000, engine=ECDSA),
}
# Legacy generation: hw_variant, hw_revision, fw_revision, dev_revid.
INTEL_LEGACY_CHIPS = {
    "8265": dict(display="8265", pid=0x0A2B, variant=0x0C, hw_rev=0x00, fw_rev=0x00, dev_revid=16),
    "9560": dict(display="9560", pid=0x0AAA, variant=0x11, hw_rev=16, fw_rev=1, dev_revid=0),
    "ax201": dict(display="AX201", pid=0x0026, variant=0x13, hw_rev=0, fw_rev=4, dev_revid=0),
    "ax200": dict(display="AX200", pid=0x0029, variant=0x14, hw_rev=1, fw_rev=3, dev_revid=0),
}


def cnvx_name(top):
    """The ibt-XXXX-YYYY half for a CNVI/CNVR_TOP value (Bumble's form = Linux's swab16)."""
    return ((top & 0xF) << 12) | ((top >> 4) & 0xF) | (((top >> 8) & 0xF) << 4) | (((top >> 24) & 0xF) << 8)


def tlv(kind, value):
    value = bytes(value)
    return bytes([kind, len(value)]) + value


class Intel(Personality):
    vendor = "intel"

    def __init__(self, chip, firmware_dir, engine=None, reset_complete=False, booted=False, fw_id=None):
        super().__init__()
        # fw_id (bytes, TLV chips of variant 0x1e on): the chip runs its intermediate loader
        # (image type 2) and reports this firmware id (TLV 0x50) in Read Version.
        self.fw_id = fw_id
        self.chip = chip
        self.tlv = chip in INTEL_TLV_CHIPS
        self.spec = dict((INTEL_TLV_CHIPS if self.tlv else INTEL_LEGACY_CHIPS)[chip])
        self.display = self.spec["display"]
        self.usb_id = (0x8087, self.spec["pid"])
        if engine is not None:
            if not self.tlv and engine != RSA:
                raise ValueError(f"{chip}: legacy bootloaders have the RSA engine only")
            self.spec["engine"] = engine
        self.engine = self.spec.get("engine", RSA)
        self.reset_complete = reset_complete
        self.otp_bdaddr = bytes([0x10, 0x32, 0x54, 0x76, 0x98, 0xBA])
        self.firmware_path = self.locate(firmware_dir, self.firmware_name("sfi"))
        with open(self.firmware_path, "rb") as f:
            image = f.read()
        (css, pki, sig, start) = TLV_LAYOUT[self.engine] if self.tlv else LEGACY_LAYOUT
        self.segments = [(0x00, image[css[0]:css[0] + css[1]]), (0x03, image[pki[0]:pki[0] + pki[1]]),
                         (0x02, image[sig[0]:sig[0] + sig[1]]), (0x01, image[start:])]
        self.payload_start = start
        # command boundaries inside the payload, and the Write Boot Params values
        self.boundaries = set()
        self.boot_address, self.fw_build = None, None
        pos = start
        while pos + 3 <= len(image):
            opcode, size = struct.unpack_from("<H", image, pos)[0], image[pos + 2]
            if opcode == INTEL_WRITE_BOOT_PARAMS and self.boot_address is None:
                self.boot_address = struct.unpack_from("<I", image, pos + 3)[0]
                self.fw_build = tuple(image[pos + 7:pos + 10])
            pos += 3 + size
            self.boundaries.add(pos - start)
        if self.boot_address is None:
            raise ValueError(f"{self.firmware_path}: no Write Boot Params command in the payload")
        self.ddc_records = []
        self.boots = 0
        self.power_cycle()
        if booted:
            self.operational = True

    # -- file names (the chip's own idea of them)
    def firmware_name(self, suffix):
        s = self.spec
        if self.tlv:
            # Linux btintel_get_fw_name_tlv: from variant 0x1e on, a boot loader's file is the
            # intermediate loader's (-iml), an intermediate loader's carries its firmware id.
            tail = ""
            if s["variant"] >= 0x1E and self.fw_id is None:
                tail = "-iml"
            elif s["variant"] >= 0x1E and self.fw_id.split(b"\0")[0]:
                tail = "-" + self.fw_id.split(b"\0")[0].decode("utf-8", "surrogateescape")
            return f"ibt-{cnvx_name(s['cnvi_top']):04x}-{cnvx_name(s['cnvr_top']):04x}{tail}.{suffix}"
        if s["variant"] in (0x0B, 0x0C):
            return f"ibt-{s['variant']}-{s['dev_revid']}.{suffix}"
        return f"ibt-{s['variant']}-{s['hw_rev']}-{s['fw_rev']}.{suffix}"

    @staticmethod
    def locate(firmware_dir, name):
        if firmware_dir is None:
            raise ValueError("Intel personalities need firmware_dir (they check the download against the file)")
        for path in (os.path.join(firmware_dir, "intel", name), os.path.join(firmware_dir, name)):
            if os.path.isfile(path):
                return path
        raise FileNotFoundError(os.path.join(firmware_dir, "intel", name))

    # -- state
    def power_cycle(self):
        self.operational = False
        self.segment, self.offset = 0, 0
        self.secure_sends = 0
        self.downloaded = False
        self.failed = False
        self.ddc_records = []

    @property
    def bulk_commands(self):
        return not self.operational

    @property
    def payload_received(self):
        """Payload bytes that arrived and matched so far."""
        if self.segment < 3:
            return 0
        return self.offset

    # -- commands
    def handle(self, opcode, params, via_bulk):
        if opcode == READ_LOCAL_VERSION:
            # manufacturer 2 (Intel) in both states; the bootloader's versions are all 0x0B / 0
            version = 0x0C if self.operational else 0x0B
            return [("event", command_complete(opcode, [0, version, 0, 0, version, 0x02, 0x00, 0, 0]))]
        if opcode == INTEL_READ_VERSION:
            return [("event", command_complete(opcode, self.version_info()))]
        if opcode == INTEL_RESET:
            return self.intel_reset(params)
        if not self.operational:
            if opcode == INTEL_SECURE_SEND:
                return self.secure_send(params, "bulk" if via_bulk else "event")
            if opcode == INTEL_READ_BOOT_PARAMS and not self.tlv:
                return [("event", command_complete(opcode, self.boot_params()))]
            if via_bulk:
                self.errors.append(f"command {opcode:#06x} on bulk OUT (only Secure Send goes there)")
            return [("event", command_complete(opcode, [UNKNOWN_COMMAND]))]
        if via_bulk:
            self.errors.append(f"command {opcode:#06x} on bulk OUT after boot")
        if opcode == INTEL_WRITE_DDC:
            if not params or params[0] + 1 != len(params):
                self.errors.append(f"DDC record {params.hex()}: length byte {params[:1].hex()} but {len(params)} bytes")
                return [("event", command_complete(opcode, [INVALID_PARAMETERS]))]
            self.ddc_records.append(bytes(params))
            return [("event", command_complete(opcode, [0]))]
        if opcode == INTEL_SET_EVENT_MASK:
            return [("event", command_complete(opcode, [0]))]
        if opcode >> 10 == 0x3F:
            return [("event", command_complete(opcode, [UNKNOWN_COMMAND]))]
        return None

    def version_info(self):
        s = self.spec
        if not self.tlv:
            variant = 0x23 if self.operational else 0x06
            build = self.fw_build if self.operational else (0x01, 0x01, 0x10)
            return bytes([0, 0x37, s["variant"], s["hw_rev"], variant, s["fw_rev"], *build, 0])
        build = self.fw_build if self.operational else (0x01, 0x01, 0x10)
        cnvi_bt = 0x37 << 8 | s["variant"] << 16
        return b"\x00" + b"".join([
            tlv(0x10, struct.pack("<I", s["cnvi_top"])),
            tlv(0x11, struct.pack("<I", s["cnvr_top"])),
            tlv(0x12, struct.pack("<I", cnvi_bt)),
            tlv(0x16, struct.pack("<H", s["dev_rev"])),
            tlv(0x1C, [0x03 if self.operational else 0x02 if self.fw_id is not None else 0x01]),
            tlv(0x1D, [0x2D, 0x16]),                 # timestamp: week, year
            tlv(0x1E, [0x01]),                       # build type: release
            tlv(0x1F, struct.pack("<I", 0x0000A1B2)),
            tlv(0x28, [0x01]),                       # secure boot
            tlv(0x2A, [0x01]), tlv(0x2B, [0x01]), tlv(0x2C, [0x00]),  # OTP / API / debug lock
            tlv(0x2D, build),                        # minimum firmware build nn, cw, yy
            tlv(0x2E, [0x00]),                       # limited CCE: every fragment gets a Command Complete
            tlv(0x2F, [self.engine]),
            tlv(0x30, self.otp_bdaddr),
        ]) + (tlv(0x50, self.fw_id) if self.fw_id is not None else b"")

    def boot_params(self):
        s = self.spec
        return bytes([0, 0x00, 0x00, 0x00, *struct.pack("<H", s["dev_revid"]), 0x01, 0x00, 0x00, 0x01, 0x01, 0x00,
                      *self.otp_bdaddr, 0x01, 0x01, 0x10, 0x00, 0x00])

    def secure_send(self, params, endpoint):
        n = self.secure_sends
        self.secure_sends += 1
        ok = [(endpoint, command_complete(INTEL_SECURE_SEND, [0]))]
        if not params:
            self.errors.append(f"secure send {n}: no fragment type")
            return [(endpoint, command_complete(INTEL_SECURE_SEND, [INVALID_PARAMETERS]))]
        kind, data = params[0], bytes(params[1:])
        if self.failed or self.downloaded:
            self.errors.append(f"secure send {n}: type {kind:#04x} after the download "
                               f"{'failed' if self.failed else 'completed'}")
            return ok
        if len(data) > FRAGMENT_MAX or not data:
            return self.fail(n, f"{len(data)} data bytes (1..{FRAGMENT_MAX})", endpoint)
        if self.offset == len(self.segments[self.segment][1]) and self.segment < 3:
            self.segment, self.offset = self.segment + 1, 0
        want_kind, want = self.segments[self.segment]
        if kind != want_kind:
            return self.fail(n, f"type {kind:#04x}, expected {want_kind:#04x} at {self.offset} of that part", endpoint)
        if data != want[self.offset:self.offset + len(data)]:
            return self.fail(n, f"type {kind:#04x}: {len(data)} bytes differ from the file at offset "
                                f"{self.offset} of that part", endpoint)
        self.offset += len(data)
        if kind == 0x01 and len(data) < FRAGMENT_MAX and (self.offset not in self.boundaries or self.offset % 4):
            return self.fail(n, f"payload fragment ends at {self.offset}, not a 4-byte aligned command boundary",
                             endpoint)
        if kind == 0x01 and self.offset == len(want):
            self.downloaded = True
            return ok + [(endpoint, vendor_event(DOWNLOAD_COMPLETE))]
        return ok

    def fail(self, n, why, endpoint):
        self.errors.append(f"secure send {n}: {why}")
        self.failed = True
        return [(endpoint, command_complete(INTEL_SECURE_SEND, [0])), (endpoint, vendor_event(DOWNLOAD_FAILED))]

    def intel_reset(self, params):
        replies = [("event", command_complete(INTEL_RESET, [0]))] if self.reset_complete else []
        if len(params) != 8:
            self.errors.append(f"Intel Reset with {len(params)} parameter bytes")
            return [("event", command_complete(INTEL_RESET, [INVALID_PARAMETERS]))]
        reset_type, patch_enable, ddc_reload, boot_option = params[:4]
        address = struct.unpack_from("<I", params, 4)[0]
        if reset_type == 0x01 or self.operational:
            # hard reset / reset to the bootloader: the patch is lost
            self.power_cycle()
            return replies
        if not self.downloaded:
            self.errors.append("Intel Reset before the download completed")
            self.power_cycle()
            return replies
        # 8260/8265 (variants 0x0b/0x0c): Linux boots them at address 0 (it reads the file's
        # address only in a version check it skips for them), and those chips accept it.
        accepted = {self.boot_address} | ({0} if not self.tlv and self.spec["variant"] in (0x0B, 0x0C) else set())
        if (patch_enable, ddc_reload, boot_option) != (0x01, 0x00, 0x01) or address not in accepted:
            self.errors.append(f"Intel Reset {params.hex()}: expected 00 01 00 01 and boot address "
                               f"{self.boot_address:#x}")
            self.power_cycle()
            return replies
        self.operational = True
        self.boots += 1
        return replies + [("event", vendor_event(BOOT_COMPLETE))]


# ---------------------------------------------------------------- Broadcom

# chip → (manufacturer, LMP subversion, default address as text, .hcd name, USB id).
# Subversions and addresses as Linux btbcm.c lists them; BCM4345C5 reports
# Cypress (305) as the Pi 4's CYW43455 does.
BROADCOM_CHIPS = {
    "bcm43430a1": (15, 0x2209, "AA:AA:AA:AA:AA:AA", "BCM43430A1.hcd", (0, 0)),
    "bcm43430b0": (15, 0x410C, "43:43:B0:00:1F:AC", "BCM43430B0.hcd", (0, 0)),
    "bcm4345c0": (15, 0x6119, "43:45:C0:00:1F:AC", "BCM4345C0.hcd", (0, 0)),
    "bcm4345c5": (305, 0x6606, "43:45:C5:00:1F:AC", "BCM4345C5.hcd", (0, 0)),
    "bcm20702a1": (15, 0x220E, "20:70:02:A0:00:00", "BCM20702A1.hcd", (0x0A5C, 0x21E8)),
}
BCM_DOWNLOAD_MINIDRIVER, BCM_WRITE_RAM, BCM_LAUNCH_RAM, BCM_UPDATE_BAUD = 0xFC2E, 0xFC4C, 0xFC4E, 0xFC18
# What Linux btbcm reads for its log (and, over USB, the file name's -vid-pid) before a download.
BCM_READ_VERBOSE_CONFIG, BCM_READ_CONTROLLER_FEATURES, BCM_READ_USB_PRODUCT = 0xFC79, 0xFC6E, 0xFC5A
READ_BD_ADDR = 0x1009
BCM_ROM_BUILD, BCM_PATCHED_BUILD = 0x0100, 0x0123
BCM_RESTART_SECONDS = 0.2


def hcd_records(data):
    """The (opcode, parameters) records of a .hcd file."""
    records, at = [], 0
    while at + 3 <= len(data):
        opcode, length = data[at] | data[at + 1] << 8, data[at + 2]
        records.append((opcode, bytes(data[at + 3:at + 3 + length])))
        at += 3 + length
    return records


def synthetic_hcd(records=40):
    """A test-made .hcd in the real record format (no BCM20702 patch may be
    redistributed): `records` Write RAM records of 240 bytes each at
    consecutive addresses, then Launch RAM to 0xFFFFFFFF."""
    out = b""
    for i in range(records):
        body = struct.pack("<I", 0x00210000 + 240 * i) + bytes((i * 7 + j) & 0xFF for j in range(240))
        out += struct.pack("<HB", BCM_WRITE_RAM, len(body)) + body
    return out + struct.pack("<HB", BCM_LAUNCH_RAM, 4) + b"\xff\xff\xff\xff"


class Broadcom(Personality):
    """A Broadcom/Cypress ROM: answers Read Local Version (its ROM build,
    then the patched one), Read BD_ADDR (the model's default address),
    Download Minidriver, Write RAM and Launch RAM (each record compared with
    the .hcd file byte for byte, in order; a record before Download Minidriver
    or out of order is an error), and Update UART Baud Rate (the new rate in
    .baud, for the UART front to apply after its answer); also the reads
    Linux btbcm makes for its log: Read Verbose Config, Read Controller
    Features and, on a USB chip, Read USB Product (its VID:PID). After Launch
    RAM the chip restarts: for 0.2 s it answers nothing, and a command sent
    then is an error (Linux waits 250 ms). Other commands, Reset among them,
    go to Bumble (the radio, in ROM and patched alike).

    The file checked is the one the host should load: for a USB chip
    brcm/BCM<chip>-<vid>-<pid>.hcd when there, else brcm/BCM<chip>.hcd."""
    vendor = "broadcom"
    # Device and interface 0 class: BCM20702 dongles show vendor class FF/01/01
    # (Linux btusb matches Broadcom's VID with that interface class).
    usb_class = (0xFF, 0x01, 0x01)

    def __init__(self, chip, firmware_dir):
        super().__init__()
        self.chip = chip
        self.manufacturer, self.subversion, address, self.hcd_name, self.usb_id = BROADCOM_CHIPS[chip]
        self.display = self.hcd_name[:-4]
        self.address = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
        names = [self.hcd_name]
        if self.usb_id != (0, 0):
            names.insert(0, "%s-%04x-%04x.hcd" % (self.display, *self.usb_id))
        paths = [os.path.join(firmware_dir or "", "brcm", name) for name in names]
        self.hcd_path = next((path for path in paths if os.path.exists(path)), None)
        self.expected = hcd_records(open(self.hcd_path, "rb").read()) if self.hcd_path else None
        self.baud = 115200
        self.downloads = 0
        self.power_cycle()

    def power_cycle(self):
        self.patched = False
        self.minidriver = False
        self.records = 0
        self.restart_until = 0.0
        self.baud = 115200

    def handle(self, opcode, params, via_bulk):
        import time
        if time.monotonic() < self.restart_until:
            self.errors.append(f"command {opcode:#06x} while the chip restarts after Launch RAM")
            return []
        if opcode == READ_LOCAL_VERSION:
            return [("event", command_complete(opcode, [0, 0x06, *struct.pack("<H", 0x1000 | self.build), 0x06,
                                                        *struct.pack("<H", self.manufacturer),
                                                        *struct.pack("<H", self.subversion)]))]
        if opcode == READ_BD_ADDR:
            return [("event", command_complete(opcode, [0, *self.address]))]
        if opcode == BCM_READ_VERBOSE_CONFIG:  # chip id, target id, build baseline, build number
            return [("event", command_complete(opcode, [0, 0x3F, 0x01, *struct.pack("<HH", 0x0800, self.build)]))]
        if opcode == BCM_READ_CONTROLLER_FEATURES:
            return [("event", command_complete(opcode, [0, 0x05, 0, 0, 0, 0, 0, 0, 0]))]
        if opcode == BCM_READ_USB_PRODUCT and self.usb_id != (0, 0):
            return [("event", command_complete(opcode, [0, *struct.pack("<HH", *self.usb_id)]))]
        if opcode == BCM_DOWNLOAD_MINIDRIVER:
            self.minidriver = True
            self.records = 0
            return [("event", command_complete(opcode, [0]))]
        if opcode in (BCM_WRITE_RAM, BCM_LAUNCH_RAM):
            return [("event", self.record(opcode, params))]
        if opcode == BCM_UPDATE_BAUD:
            if len(params) != 6 or params[:2] != b"\x00\x00":
                self.errors.append(f"Update UART Baud Rate with parameters {params.hex()}")
                return [("event", command_complete(opcode, [INVALID_PARAMETERS]))]
            self.baud = struct.unpack("<I", params[2:])[0]
            return [("event", command_complete(opcode, [0]))]
        return None

    @property
    def build(self):
        return BCM_PATCHED_BUILD if self.patched else BCM_ROM_BUILD

    def record(self, opcode, params):
        import time
        i = self.records
        if not self.minidriver:
            self.errors.append(f"record {i} ({opcode:#06x}) before Download Minidriver")
            return command_complete(opcode, [UNKNOWN_COMMAND])
        if self.expected is None or i >= len(self.expected) or self.expected[i] != (opcode, bytes(params)):
            self.errors.append(f"record {i} ({opcode:#06x}, {len(params)} bytes) differs from the file's")
            return command_complete(opcode, [INVALID_PARAMETERS])
        self.records += 1
        if opcode == BCM_LAUNCH_RAM:
            if self.records != len(self.expected):
                self.errors.append(f"Launch RAM after {self.records} of {len(self.expected)} records")
            self.patched = True
            self.minidriver = False
            self.downloads += 1
            self.restart_until = time.monotonic() + BCM_RESTART_SECONDS
            self.baud = 115200  # the restart puts the UART back at its first rate
        return command_complete(opcode, [0])


# ---------------------------------------------------------------- MediaTek

# chip → (chip id register, firmware version register, flavour register, USB VID:PID, label)
MEDIATEK_CHIPS = {
    "mt7921": (0x7961, 0x01, 0x00, (0x13D3, 0x3563), "MT7921"),
    "mt7921a": (0x7961, 0x01, 0x80, (0x0489, 0xE0CD), "MT7921"),
    "mt7922": (0x7922, 0x00, 0x00, (0x13D3, 0x3568), "MT7922"),
    "mt7925": (0x7925, 0x00, 0x00, (0x0489, 0xE113), "MT7925"),
}
MTK_WMT, MTK_EVENT = 0xFC6F, 0xE4
MTK_PATCH, MTK_FUNC_CTRL, MTK_REGISTER = 0x01, 0x06, 0x08
# Registers Linux btmtk.c reads and writes (UHW space for the reset ones).
MTK_MISC, MTK_SUBSYS_RST, MTK_EP_RST_OPT = 0x70002510, 0x70002610, 0x74011890
MTK_CONNV3_RST, MTK_UDMA_INT, MTK_UDMA_INT1, MTK_WDT_STATUS = 0x70028610, 0x74000024, 0x74000308, 0x740003A0
MTK_EP_RST_IN_OUT, MTK_RST_DONE = 0x00010001, 0x00000100
MTK_FAULTS = ("wrong-op", "short", "status-3", "register", "silent")
# The reset registers' power-on values: the emulation's own (the real ones are
# undocumented), with bits set that a reset write must keep or clear, so that a
# write ignoring the value read, or the clear mask, shows.
MTK_RESET_REGISTERS = {MTK_SUBSYS_RST: 0x00000400, MTK_CONNV3_RST: 0x00001F10}


def mediatek_reset_sequence(chip_id):
    """btmtk_usb_subsys_reset's UHW register operations for the chip, in order
    (Linux btmtk.c; facts): ("read", address) or ("write", address, value), the
    value a number or a function of the last value read. Then (not listed) the
    reset-done poll of MTK_MISC, on the MT7922 a 0xFF write to MTK_UDMA_INT, and
    the chip id read. The MT7921 (0x7961) also waits 20 ms between its two
    writes of the reset bit."""
    if chip_id == 0x7922:
        return [("read", MTK_SUBSYS_RST), ("write", MTK_SUBSYS_RST, lambda last: last | 0x2020),
                ("write", MTK_EP_RST_OPT, MTK_EP_RST_IN_OUT), ("read", MTK_SUBSYS_RST),
                ("write", MTK_SUBSYS_RST, lambda last: last | 1)]
    if chip_id == 0x7925:
        return [("read", MTK_CONNV3_RST), ("write", MTK_CONNV3_RST, lambda last: last | 1 << 5),
                ("read", MTK_CONNV3_RST), ("write", MTK_CONNV3_RST, lambda last: last & 0xFFFF00FF | 1 << 13),
                ("write", MTK_EP_RST_OPT, MTK_EP_RST_IN_OUT), ("read", MTK_CONNV3_RST),
                ("write", MTK_CONNV3_RST, lambda last: last | 1),
                ("write", MTK_UDMA_INT, 0xFF), ("read", MTK_UDMA_INT), ("write", MTK_UDMA_INT1, 0xFF),
                ("read", MTK_UDMA_INT1)]
    return [("write", MTK_EP_RST_OPT, MTK_EP_RST_IN_OUT), ("read", MTK_WDT_STATUS), ("write", MTK_SUBSYS_RST, 1),
            ("write", MTK_UDMA_INT, 0xFF), ("read", MTK_UDMA_INT), ("write", MTK_UDMA_INT1, 0xFF),
            ("read", MTK_UDMA_INT1), ("write", MTK_SUBSYS_RST, 0), ("read", MTK_SUBSYS_RST)]


def mediatek_file_name(chip_id, version, flavour):
    """btmtk_fw_get_filename: the file under mediatek/."""
    if chip_id == 0x7925:
        return f"mt7925/BT_RAM_CODE_MT{chip_id:04x}_1_{(version & 0xFF) + 1:x}_hdr.bin"
    middle = "1a" if chip_id == 0x7961 and flavour & 0x80 else "1"
    return f"BT_RAM_CODE_MT{chip_id:04x}_{middle}_{(version & 0xFF) + 1:x}_hdr.bin"


def mediatek_sections(data):
    """The (map bytes the status query sends, the bytes to load) of each section with bytes to load."""
    count = struct.unpack_from("<I", data, 44)[0]
    out = []
    for i in range(count):
        at = 96 + 64 * i
        offset, load = struct.unpack_from("<I", data, at + 4)[0], struct.unpack_from("<I", data, at + 16)[0]
        if load:
            out.append((bytes(data[at + 12:at + 64]), bytes(data[offset:offset + load])))
    return out


def wmt_event(operation, flag=0, data=b""):
    """A WMT answer: vendor event 0xE4, direction 2, operation, length, flag, data."""
    body = bytes([2, operation]) + struct.pack("<H", len(data) + 1) + bytes([flag]) + bytes(data)
    return bytes([MTK_EVENT, len(body)]) + body


def reset_text(op):
    return f"{op[0]} {op[1]:#010x}" + (f" = {op[2]:#010x}" if op[0] == "write" else "")


class MediaTek(Personality):
    """A MediaTek MT7921/MT7922/MT7925 before its RAM code: answers Reset and
    Read Local Version (manufacturer 70: over H4 the probe hands over), the
    register commands (WMT operation 8 in this program's form; over USB the
    gadget answers the vendor control requests instead, through .read_register
    and .write_register), and the WMT patch download: each section's status
    query is compared with the file's section map, each 250-byte chunk with
    the file's bytes (flags 1 first, 2, 3 last), in order; function control 1
    turns Bluetooth on, and from then on every other command goes to Bumble.
    Any other command before that is an error and gets Unknown HCI Command.
    warm=True: the RAM code runs already (every status query says "there").
    present=(1, 2): those sections are there already (their status queries say
    so), the others come: a short download (the USB guest's Linux reference).
    fault=...: one malformed answer (MTK_FAULTS) to the first status query or
    register read; "status-3" answers the first status query with 3, which
    btmtk.c (btmtk_usb_hci_wmt_sync) takes as "undone": the section must come.
    Function control 0 (btmtk_usb_shutdown at close) turns Bluetooth off
    (counted in .disables). WMT answers go to the endpoint "control" (over USB: read
    through control IN; over H4: an event like any other).

    .wedge(): the running chip stops answering: every HCI command (WMT ones
    included) is taken and dropped, the reset-done bit of MTK_MISC clears; the
    register requests still work (the USB side answers them). Only Linux's
    subsystem reset for this chip brings it back (mediatek_reset_sequence: each
    UHW read and write in order, each written value computed from the value
    read, the MT7921's 20 ms between its reset bit's two writes): then it is
    cold (its RAM code gone: the download comes again, warm or not), the reset
    registers hold their power-on values and the reset-done bit is set. An
    operation out of order is an error (in .errors) and the sequence must start
    again; a port reset does not help."""
    vendor = "mediatek"

    def __init__(self, chip, firmware_dir, warm=False, fault=None, present=()):
        super().__init__()
        self.chip = chip
        self.present = tuple(present)
        chip_id, version, flavour, self.usb_id, label = MEDIATEK_CHIPS[chip]
        self.display = label
        self.chip_id = chip_id
        self.registers = {0x80000008: 0, 0x70010200: chip_id, 0x80021004: version, 0x70010020: flavour,
                          MTK_MISC: MTK_RST_DONE, MTK_EP_RST_OPT: 0, **MTK_RESET_REGISTERS}
        self.file_name = mediatek_file_name(chip_id, version, flavour)
        path = os.path.join(firmware_dir or "", "mediatek", self.file_name)
        try:
            self.expected = mediatek_sections(open(path, "rb").read())
        except (OSError, struct.error):
            self.expected = None  # no file, or one this program must refuse before sending anything
        self.warm = warm
        self.fault = fault
        self.register_ops = []
        self.downloads = 0
        self.resets = 0
        self.disables = 0
        self.after_off = []  # HCI commands after Bluetooth off (opcodes)
        self.power_cycle()

    def power_cycle(self):
        self.loaded = self.warm
        self.cold()

    def cold(self):
        self.enabled = False
        self.section = 0
        self.received = None
        self.wedged = False
        self.reset_ops = []
        self.reset_last = 0
        self.reset_bit_at = 0.0

    def wedge(self):
        self.wedged = True
        self.registers[MTK_MISC] &= ~MTK_RST_DONE

    def read_register(self, space, address):
        """A register read (the id space, 0, or UHW, 1): its value, None when refused."""
        self.register_ops.append(("read", space, address))
        if self.fault == "register":
            return None
        value = self.registers.get(address, 0)
        if space == 1:
            self.reset_step(("read", address), value)
        return value

    def write_register(self, space, address, value):
        self.register_ops.append(("write", space, address, value))
        self.registers[address] = value
        if space == 1:
            self.reset_step(("write", address, value))
        return True

    def reset_step(self, op, value=None):
        """A UHW operation while wedged: the next of the kernel's reset sequence, or an error."""
        if not self.wedged:
            return
        sequence = mediatek_reset_sequence(self.chip_id)
        step = len(self.reset_ops)
        want = sequence[step]
        if want[0] == "write" and callable(want[2]):
            want = ("write", want[1], want[2](self.reset_last))
        waited = time.monotonic() - self.reset_bit_at
        late = self.chip_id == 0x7961 and op == want == ("write", MTK_SUBSYS_RST, 0) and waited < 0.020
        if op != want or late:
            why = (f"{reset_text(op)} {waited * 1000:.0f} ms after the reset bit's, btmtk.c's 20 ms later" if late
                   else f"{reset_text(op)}, btmtk.c's is {reset_text(want)}")
            self.errors.append(f"subsystem reset: register operation {step + 1} is {why}; still wedged")
            self.reset_ops = []
            if step:  # it may be a new attempt's first operation
                self.reset_step(op, value)
            return
        if op[0] == "read":
            self.reset_last = value
        if op == ("write", MTK_SUBSYS_RST, 1):
            self.reset_bit_at = time.monotonic()
        self.reset_ops.append(op)
        if len(self.reset_ops) == len(sequence):
            # The Bluetooth subsystem restarts: cold, its RAM code gone, the reset done.
            self.resets += 1
            self.loaded = False
            self.cold()
            self.registers.update(MTK_RESET_REGISTERS)
            self.registers[MTK_MISC] |= MTK_RST_DONE

    def handle(self, opcode, params, via_bulk):
        if self.wedged:
            return []  # taken and dropped
        if opcode == RESET and not self.enabled:
            return [("event", command_complete(opcode, [0]))]
        if opcode == READ_LOCAL_VERSION and not self.enabled:
            return [("event", command_complete(opcode, [0, 0x0B, 0, 0, 0x0B, 70, 0, 0, 0]))]
        if opcode == MTK_WMT:
            return self.wmt(params)
        if not self.enabled:
            if self.loaded and self.disables:
                # Bluetooth was switched off (a host's close: btmtk_usb_shutdown); what comes
                # after is the next host's, e.g. the guest's 6.1 btusb, which takes an MT7925
                # for a plain controller and sends Read Local Features at once. Not counted
                # as a protocol error: the TCP suite checks that ours sends nothing after it.
                self.after_off.append(opcode)
            else:
                self.errors.append(f"command {opcode:#06x} before Bluetooth is on")
            return [("event", command_complete(opcode, [UNKNOWN_COMMAND]))]
        return None

    def wmt(self, params):
        if len(params) < 5 or params[0] != 1 or struct.unpack_from("<H", params, 2)[0] != len(params) - 4:
            self.errors.append(f"malformed WMT command {bytes(params).hex()}")
            return []
        operation, flag, data = params[1], params[4], bytes(params[5:])
        if operation == MTK_REGISTER:
            return [("control", self.register(flag, data))]
        if operation == MTK_PATCH:
            answer = self.patch(flag, data)
            return [] if answer is None else [("control", answer)]
        if operation == MTK_FUNC_CTRL:
            if self.loaded and data == b"\x01":
                self.enabled = True
            elif self.enabled and data == b"\x00":
                self.enabled = False
                self.disables += 1
            else:
                self.errors.append(f"function control {data.hex()} with the RAM code {'in' if self.loaded else 'not in'}")
            return [("control", wmt_event(MTK_FUNC_CTRL, 0, b"\x04\x04"))]
        self.errors.append(f"WMT operation {operation:#04x}")
        return [("control", wmt_event(operation))]

    def register(self, space, data):
        """A register command over H4: read (2) or write (1), address, value."""
        kind, address = data[0], struct.unpack_from("<I", data, 1)[0]
        if kind == 2:
            value = self.read_register(space, address)
        else:
            value = 0 if self.write_register(space, address, struct.unpack_from("<I", data, 5)[0]) else None
        return self.register_answer(value)

    @staticmethod
    def register_answer(value):
        return wmt_event(MTK_REGISTER, 0, bytes([0 if value is not None else 1]) + struct.pack("<I", value or 0))

    def patch(self, flag, data):
        if self.received is None:
            # The status query of the next section.
            if flag != 0 or data[:1] != b"\x00":
                self.errors.append(f"a chunk (flag {flag}) before its section's status query")
                return wmt_event(MTK_PATCH, 0)
            if self.fault == "wrong-op":
                return wmt_event(MTK_FUNC_CTRL, 0)
            if self.fault == "short":
                return bytes([MTK_EVENT, 3, 2, MTK_PATCH, 1])
            status_3 = self.fault == "status-3" and self.section == 0
            if self.fault == "silent":
                return None
            if self.expected is None or self.section >= len(self.expected):
                self.errors.append(f"status query for section {self.section} of a file with "
                                   f"{len(self.expected or [])}")
                return wmt_event(MTK_PATCH, 2)
            if data[1:] != self.expected[self.section][0]:
                self.errors.append(f"section {self.section}'s status query differs from the file's section map")
            if self.loaded or self.section in self.present:
                self.section += 1
                if self.section == len(self.expected) and not self.loaded:
                    self.finish_download()
                return wmt_event(MTK_PATCH, 2)
            self.received = bytearray()
            return wmt_event(MTK_PATCH, 3 if status_3 else 0)
        want = self.expected[self.section][1]
        first, last = len(self.received) == 0, len(self.received) + len(data) >= len(want)
        expected_flag = 1 if first else (3 if last else 2)
        if flag != expected_flag or len(data) > 250:
            self.errors.append(f"section {self.section} chunk at {len(self.received)}: flag {flag}, "
                               f"{len(data)} bytes (want flag {expected_flag}, at most 250)")
        if data != want[len(self.received):len(self.received) + len(data)]:
            self.errors.append(f"section {self.section} chunk at {len(self.received)} differs from the file's bytes")
        self.received += data
        if len(self.received) >= len(want):
            self.section += 1
            self.received = None
            if self.section == len(self.expected):
                self.finish_download()
        return wmt_event(MTK_PATCH, 0)

    def finish_download(self):
        self.loaded = True
        self.downloads += 1
        self.loaded_at = time.monotonic()


# ---------------------------------------------------------------- registry

CHIPS = {**{c: "realtek" for c in REALTEK_CHIPS}, **{c: "intel" for c in INTEL_TLV_CHIPS},
         **{c: "intel" for c in INTEL_LEGACY_CHIPS}, **{c: "broadcom" for c in BROADCOM_CHIPS},
         **{c: "mediatek" for c in MEDIATEK_CHIPS}}


def make(chip, firmware_dir=None, rom_version=None, **options):
    """A fresh personality. Intel options: engine=RSA|ECDSA (TLV chips),
    reset_complete=True (Command Complete for Intel Reset), booted=True (start
    operational: a warm controller), fw_id=bytes (variant 0x1e on: start in the
    intermediate loader, reporting that firmware id). MediaTek options: warm=True, fault=one of MTK_FAULTS."""
    if chip not in CHIPS:
        raise ValueError(f"unknown chip {chip!r}; known: {', '.join(sorted(CHIPS))}")
    if CHIPS[chip] == "realtek":
        return Realtek(chip, rom_version)
    if CHIPS[chip] == "broadcom":
        return Broadcom(chip, firmware_dir)
    if CHIPS[chip] == "mediatek":
        return MediaTek(chip, firmware_dir, **options)
    return Intel(chip, firmware_dir, **options)
