import BLEHost

/// Linux btusb rows (Debian 13's kernel, `btusb.ko`'s device and quirks
/// tables) for a chipset family we know, that no chipset of the table claims,
/// each with the reason. docs/DONGLES.md "Kernel rows not claimed" lists the
/// same rows; Tests/CLI/test_kernel_table.py holds both against the kernel.
public enum NotServed {
    /// The family and why, for a VID:PID no chipset claims; nil when not listed.
    public static func reason(vendor: UInt16, product: UInt16) -> (family: StaticString, why: StaticString)? {
        switch (UInt32(vendor) << 16) | UInt32(product) {
        case 0x0A12_0001, 0x8087_07DA:
            // BTUSB_CSR: btusb only checks for fake-CSR clones; a genuine BlueCore needs no set-up.
            ("csr", "no chipset set-up needed: a standard HCI controller (CSR BlueCore), driven as one")
        case 0x8087_07DC, 0x8087_0A2A, 0x8087_0AA7:
            // BTUSB_INTEL_COMBINED | BTUSB_INTEL_BROKEN_READ_VERSION: btintel's legacy ROM set-up.
            ("intel", "a legacy ROM Intel (7260, 7265, 3168): patched with .bseq files, a set-up we do not have (only the boot loader's .sfi)")
        default:
            nil
        }
    }
}
