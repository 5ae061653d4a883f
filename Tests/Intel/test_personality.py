"""The Intel (and Realtek) personalities of Tests/PythonSupport/personalities.py
against a scripted host: no Swift, no Bumble controller. The host here is
written from the protocol description (offsets, fragment types, the
multiple-of-4 grouping), not from the personality's code, so a personality
that accepted the wrong bytes, order or boot address would fail these."""
import os
import struct

import personalities as P
import pytest

TLV_FILES = {"ax210": "ibt-0041-0041", "ax211": "ibt-0040-0041"}
LEGACY_FILES = {"8265": "ibt-12-16", "9560": "ibt-17-16-1", "ax201": "ibt-19-0-4", "ax200": "ibt-20-1-3"}
# engine → ((css offset, size), (pki offset, size), (signature offset, size), payload offset)
HEADERS = {"rsa": ((0, 128), (128, 256), (388, 256), 964), "ecdsa": ((644, 128), (772, 96), (868, 96), 964),
           "legacy": ((0, 128), (128, 256), (388, 256), 644)}


def cmd(opcode, params=b""):
    return struct.pack("<HB", opcode, len(params)) + bytes(params)


def cc_status(reply, opcode):
    endpoint, event = reply
    assert event[0] == 0x0E and event[3] | event[4] << 8 == opcode, event.hex()
    return event[5]


class Host:
    """Loads a .sfi the way the protocol says; keeps every reply."""

    def __init__(self, personality, via_bulk=True):
        self.p = personality
        self.via_bulk = via_bulk
        self.replies = []
        self.boot_address = None

    def send(self, command, via_bulk=False):
        replies = self.p.on_command(command, via_bulk=via_bulk)
        assert replies is not None, f"{command[:2].hex()} was forwarded"
        self.replies += replies
        return replies

    def secure_send(self, kind, data):
        while data:
            replies = self.send(cmd(0xFC09, bytes([kind]) + data[:252]), via_bulk=self.via_bulk)
            assert cc_status(replies[0], 0xFC09) == 0
            assert replies[0][0] == ("bulk" if self.via_bulk else "event")
            data = data[252:]

    def download(self, image, layout):
        css, pki, sig, start = HEADERS[layout]
        self.secure_send(0x00, image[css[0]:css[0] + css[1]])
        self.secure_send(0x03, image[pki[0]:pki[0] + pki[1]])
        self.secure_send(0x02, image[sig[0]:sig[0] + sig[1]])
        offset, group = start, 0
        while offset + group + 3 <= len(image):
            opcode, size = struct.unpack_from("<HB", image, offset + group)
            if opcode == 0xFC0E:
                self.boot_address = struct.unpack_from("<I", image, offset + group + 3)[0]
            group += 3 + size
            if group % 4 == 0:
                self.secure_send(0x01, image[offset:offset + group])
                offset, group = offset + group, 0

    def vendor_events(self):
        return [e for _, e in self.replies if e[0] == 0xFF]

    def intel_reset(self, address=None):
        address = self.boot_address if address is None else address
        return self.send(cmd(0xFC01, bytes([0, 1, 0, 1]) + struct.pack("<I", address)))


def image_of(firmware_dir, name):
    with open(os.path.join(firmware_dir, "intel", name + ".sfi"), "rb") as f:
        return f.read()


def tlvs(reply):
    _, event = reply
    assert event[5] == 0, event.hex()
    data, out = event[6:], {}
    while len(data) >= 2:
        out[data[0]] = data[2:2 + data[1]]
        data = data[2 + data[1]:]
    return out


@pytest.mark.parametrize("chip", sorted(TLV_FILES))
@pytest.mark.parametrize("engine", ["rsa", "ecdsa"])
def test_tlv_bootloader_download_and_boot(chip, engine, firmware_dir):
    p = P.make(chip, firmware_dir, engine=P.RSA if engine == "rsa" else P.ECDSA)
    assert p.vendor == "intel" and p.usb_id == {"ax210": (0x8087, 0x0032), "ax211": (0x8087, 0x0033)}[chip]
    host = Host(p)
    assert cc_status(host.send(cmd(0x0C03))[0], 0x0C03) == 0x01
    local = host.send(cmd(0x1001))[0][1]
    assert local[5:] == bytes([0, 0x0B, 0, 0, 0x0B, 0x02, 0x00, 0, 0])
    info = tlvs(host.send(cmd(0xFC05, b"\xff"))[0])
    assert info[0x1C] == b"\x01" and info[0x2F] == bytes([0 if engine == "rsa" else 1]) and info[0x2E] == b"\x00"
    assert (struct.unpack("<I", info[0x12])[0] >> 8) & 0xFF == 0x37
    assert p.bulk_commands
    host.download(image_of(firmware_dir, TLV_FILES[chip]), engine)
    assert p.errors == [] and host.vendor_events() == [bytes.fromhex("ff05060009fc00")]
    replies = host.intel_reset()
    assert [e for _, e in replies] == [bytes.fromhex("ff0702000100000000")]
    assert not p.bulk_commands
    info = tlvs(host.send(cmd(0xFC05, b"\xff"))[0])
    assert info[0x1C] == b"\x03"
    with open(os.path.join(firmware_dir, "intel", TLV_FILES[chip] + ".ddc"), "rb") as f:
        ddc = f.read()
    while ddc:
        record, ddc = ddc[:1 + ddc[0]], ddc[1 + ddc[0]:]
        assert cc_status(host.send(cmd(0xFC8B, record))[0], 0xFC8B) == 0
    assert p.ddc_records and b"".join(p.ddc_records) == open(
        os.path.join(firmware_dir, "intel", TLV_FILES[chip] + ".ddc"), "rb").read()
    assert p.on_command(cmd(0x0C03)) is None  # operational: the real controller answers
    assert p.errors == []


@pytest.mark.parametrize("chip", sorted(TLV_FILES))
def test_tlv_wrong_engine_headers_are_refused(chip, firmware_dir):
    """The chip's engine decides which header set it takes: the other set fails."""
    for engine, sent in ((P.RSA, "ecdsa"), (P.ECDSA, "rsa")):
        p = P.make(chip, firmware_dir, engine=engine)
        host = Host(p)
        host.download(image_of(firmware_dir, TLV_FILES[chip]), sent)
        assert p.errors and p.failed and not p.downloaded
        assert bytes.fromhex("ff05060109fc00") in host.vendor_events()
        assert bytes.fromhex("ff05060009fc00") not in host.vendor_events()


@pytest.mark.parametrize("chip", sorted(LEGACY_FILES))
def test_legacy_bootloader_linux_order(chip, firmware_dir):
    p = P.make(chip, firmware_dir)
    host = Host(p)
    version = host.send(cmd(0xFC05, b"\xff"))[0][1][5:]
    assert len(version) == 10 and version[0] == 0 and version[1] == 0x37 and version[4] == 0x06
    params = host.send(cmd(0xFC0D))[0][1][5:]
    assert len(params) == 23 and params[0] == 0 and params[21] == 0  # Linux's struct intel_boot_params
    variant, dev_revid = version[2], struct.unpack_from("<H", params, 4)[0]
    name = (f"ibt-{variant}-{dev_revid}" if variant in (0x0B, 0x0C)
            else f"ibt-{variant}-{version[3]}-{version[5]}")
    assert name == LEGACY_FILES[chip]
    image = image_of(firmware_dir, name)
    host.download(image, "legacy")
    assert p.errors == [] and host.vendor_events() == [bytes.fromhex("ff05060009fc00")]
    host.intel_reset()
    assert p.operational
    after = host.send(cmd(0xFC05))[0][1][5:]
    assert after[4] == 0x23
    # Linux skips a download when these equal the file's Write Boot Params build (num, ww, yy)
    assert tuple(after[6:9]) == p.fw_build and tuple(version[6:9]) != p.fw_build
    assert cc_status(host.send(cmd(0xFC52, bytes(8)))[0], 0xFC52) == 0


def test_payload_mismatch_fails_with_result_1(firmware_dir):
    image = bytearray(image_of(firmware_dir, "ibt-0041-0041"))
    image[964 + 5000] ^= 0xFF
    p = P.make("ax210", firmware_dir, engine=P.RSA)
    host = Host(p, via_bulk=False)
    host.download(bytes(image), "rsa")
    assert host.vendor_events() == [bytes.fromhex("ff05060109fc00")]
    assert any("differ" in e for e in p.errors)
    assert host.intel_reset(address=p.boot_address) == [] and not p.operational
    assert any("before the download completed" in e for e in p.errors)


def test_truncated_download_never_completes(firmware_dir):
    image = image_of(firmware_dir, "ibt-0041-0041")
    p = P.make("ax210", firmware_dir)
    host = Host(p)
    host.download(image[:len(image) // 2], "rsa")
    assert bytes.fromhex("ff05060009fc00") not in host.vendor_events() and not p.downloaded
    assert host.intel_reset(address=p.boot_address) == [] and not p.operational


def test_wrong_boot_address_does_not_boot(firmware_dir):
    p = P.make("ax211", firmware_dir)
    host = Host(p)
    host.download(image_of(firmware_dir, "ibt-0040-0041"), "ecdsa")
    assert host.intel_reset(address=host.boot_address + 4) == []
    assert not p.operational and any("boot address" in e for e in p.errors)


def test_unaligned_payload_fragment_is_an_error(firmware_dir):
    image = image_of(firmware_dir, "ibt-0041-0041")
    p = P.make("ax210", firmware_dir, engine=P.RSA)
    host = Host(p)
    host.secure_send(0x00, image[0:128])
    host.secure_send(0x03, image[128:384])
    host.secure_send(0x02, image[388:644])
    host.send(cmd(0xFC09, b"\x01" + image[964:964 + 3]))  # one command header, cut short
    assert p.failed and any("boundary" in e for e in p.errors)


def test_power_cycle_returns_to_bootloader(firmware_dir):
    p = P.make("ax210", firmware_dir, booted=True)
    assert tlvs(p.on_command(cmd(0xFC05, b"\xff"))[0])[0x1C] == b"\x03"
    p.power_cycle()
    assert tlvs(p.on_command(cmd(0xFC05, b"\xff"))[0])[0x1C] == b"\x01"
    assert p.bulk_commands


def test_bootloader_refuses_other_commands(firmware_dir):
    p = P.make("ax210", firmware_dir)
    assert cc_status(p.on_command(cmd(0x2003))[0], 0x2003) == 0x01
    assert p.on_command(cmd(0x0C03), via_bulk=True)[0][0] == "event"
    assert any("bulk OUT" in e for e in p.errors)


def test_tlv_names_agree_with_bumble_parser(firmware_dir):
    """Bumble's TLV parser (a second opinion) derives the same file names."""
    intel = pytest.importorskip("bumble.drivers.intel")
    for chip, name in TLV_FILES.items():
        info = dict(intel._parse_tlv(P.make(chip, firmware_dir).version_info()[1:]))
        assert f"ibt-{info[intel.ValueType.CNVI]:04x}-{info[intel.ValueType.CNVR]:04x}" == name
        assert info[intel.ValueType.HARDWARE_INFO].platform == 0x37


def test_missing_firmware_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="ibt-0041-0041.sfi"):
        P.make("ax210", str(tmp_path))


def test_realtek_personality_unchanged():
    p = P.make("rtl8761bu", rom_version=1)
    assert p.vendor == "realtek" and p.usb_id[0] == 0x0BDA
    assert p.on_command(cmd(0x1001))[0][1][5:] == bytes([0, 0x0A, 0x0B, 0, 0x0A, 0x5D, 0, 0x61, 0x87])
    assert p.on_command(cmd(0xFC6D))[0][1][5:] == bytes([0, 1])
    assert p.on_command(cmd(0xFC20, bytes([0x01]) + b"x"))[0][1][5] == 0x12 and p.errors  # index 1 first: refused
    assert p.on_command(cmd(0xFC20, bytes([0x80]) + b"x"))[0][1][5:] == bytes([0, 0x80])
    assert p.patched and p.payload == b"x" and p.on_command(cmd(0x1001)) is None


def test_chip_table():
    assert {"rtl8761bu", "ax210", "ax211", "8265", "9560", "ax200", "ax201"} <= set(P.CHIPS)
    with pytest.raises(ValueError):
        P.make("nope")
