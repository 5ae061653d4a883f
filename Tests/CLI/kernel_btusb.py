"""Debian 13's btusb.ko, read as users' kernels read it: the device table
(`__mod_usb__btusb_table_device_table`, what modules.alias is made of) and the
quirks table (the local `quirks_table`, whose row's driver info picks the
vendor set-up), as `struct usb_device_id` rows. The module comes from the
kernel package itself (scripts/kernel-btusb.sh, cached under .cache/): no copy
of the table is kept in the repository."""
import lzma
import struct
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# include/linux/mod_devicetable.h, struct usb_device_id on a 64-bit kernel:
# match_flags, idVendor, idProduct, bcdDevice_lo, bcdDevice_hi (u16), then
# bDeviceClass/SubClass/Protocol, bInterfaceClass/SubClass/Protocol,
# bInterfaceNumber (u8), padding to 8, driver_info (kernel_ulong_t): 32 bytes.
ROW = struct.Struct("<HHHHHBBBBBBB7xQ")
# include/linux/usb.h USB_DEVICE_ID_MATCH_*.
MATCH_VENDOR, MATCH_PRODUCT = 0x0001, 0x0002
MATCH_DEV_CLASS, MATCH_INT_CLASS = 0x0010, 0x0080

# Linux v6.12 drivers/bluetooth/btusb.c, its BTUSB_* driver-info bits
# (`#define BTUSB_CSR BIT(2)` … `#define BTUSB_MEDIATEK BIT(20)`): the families
# whose set-up we know, in our table's names.
FAMILIES = {1 << 2: "csr", 1 << 8: "intel", 1 << 10: "broadcom", 1 << 16: "realtek", 1 << 20: "mediatek"}
FLAG_NAMES = {1 << 2: "BTUSB_CSR", 1 << 8: "BTUSB_INTEL_COMBINED", 1 << 10: "BTUSB_BCM_PATCHRAM",
              1 << 16: "BTUSB_REALTEK", 1 << 20: "BTUSB_MEDIATEK"}


def module_path():
    """The cached btusb.ko of Debian 13's newest 6.12 kernel package (fetched once)."""
    out = subprocess.run([str(REPO / "scripts/kernel-btusb.sh")], capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, f"scripts/kernel-btusb.sh failed: {out.stderr[-2000:]}"
    return Path(out.stdout.strip().splitlines()[-1])


def package_name():
    return (REPO / ".cache/kernel-btusb/package").read_text().strip()


def symbols(elf):
    """name -> (section index, value, size) from the ELF64 little-endian symbol table."""
    assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not an ELF64 little-endian module"
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    symtab = next(s for s in sections if s[1] == 2)  # SHT_SYMTAB
    strings = sections[symtab[6]][4]
    found = {}
    for k in range(symtab[5] // 24):
        name, _, _, shndx, value, size = struct.unpack_from("<IBBHQQ", elf, symtab[4] + k * 24)
        end = elf.index(b"\0", strings + name)
        found[elf[strings + name:end].decode()] = (shndx, value, size)
    return found, sections


def table(elf, found, sections, name):
    shndx, value, size = found[name]
    section = sections[shndx]
    # driver_info is a constant: no relocation may touch the table (else the bytes are not the values).
    for s in sections:
        if s[1] == 4 and s[7] == shndx:  # SHT_RELA for that section
            for r in range(s[5] // 24):
                offset, = struct.unpack_from("<Q", elf, s[4] + r * 24)
                assert not value <= offset < value + size, f"{name}: a relocation at +{offset - value}"
    base = section[4] + value
    rows = [ROW.unpack_from(elf, base + i * ROW.size) for i in range(size // ROW.size)]
    assert rows and rows[-1][0] == 0, f"{name}: no terminating entry"
    return rows[:-1]


def rows():
    """(table name, match_flags, vendor, product, device class triple, interface class triple, driver_info)."""
    elf = lzma.open(module_path()).read() if str(module_path()).endswith(".xz") else module_path().read_bytes()
    found, sections = symbols(elf)
    out = []
    for name, label in (("__mod_usb__btusb_table_device_table", "device table"), ("quirks_table", "quirks table")):
        for r in table(elf, found, sections, name):
            out.append((label, r[0], r[1], r[2], r[5:8], r[8:11], r[12]))
    return out
