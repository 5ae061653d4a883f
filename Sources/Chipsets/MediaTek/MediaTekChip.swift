import BLEHost

public enum MediaTekChip {
    /// The marketing name of a chip id (low 16 bits); nil when not served.
    public static func name(id: UInt32) -> StaticString? {
        switch id & 0xFFFF {
        case 0x7961: "MT7921"
        case 0x7922: "MT7922"
        case 0x7925: "MT7925"
        default: nil
        }
    }

    /// The chip a USB dongle's VID:PID says (btusb.c's MediaTek table, and
    /// MediaTek's own VID for any product); nil when not MediaTek's.
    public static func usbChip(vendor: UInt16, product: UInt16) -> UInt16? {
        let id = (UInt32(vendor) << 16) | UInt32(product)
        for index in usbRows.indices where usbRows[index] == id {
            return index < 12 ? 0x7961 : index < 37 ? 0x7922 : index < 55 ? 0x7925 : 0
        }
        // btusb takes every MediaTek Bluetooth interface; the id read at start names it.
        return vendor == 0x0E8D ? 0 : nil
    }

    /// btusb.c's MediaTek rows (VID:PID as one number), by chip: 12 MT7961, 25
    /// MT7922, 18 MT7925, then 11 whose chip the id read at start names. Tables
    /// are data walked by a loop: a `switch` over them was ~8 bytes of code a row.
    static let usbRows: InlineArray<66, UInt32> = [
        // MT7961
        0x0489_E0C8, 0x0489_E0CD, 0x0489_E0E0, 0x04CA_3802, 0x0E8D_0608, 0x13D3_3563, 0x13D3_3564,
        0x13D3_3567, 0x13D3_3578, 0x13D3_3583, 0x13D3_3606, 0x0E8D_7961,
        // MT7922
        0x13D3_3585, 0x0489_E0D8, 0x0489_E0D9, 0x0489_E0E2, 0x0489_E0E4, 0x0489_E0F1, 0x0489_E0F2,
        0x0489_E0F5, 0x0489_E0F6, 0x0489_E102, 0x04CA_3804, 0x04CA_38E4, 0x13D3_3568, 0x13D3_3605,
        0x13D3_3607, 0x13D3_3614, 0x13D3_3615, 0x35F5_7922, 0x0E8D_0616, 0x0E8D_7922,
        0x13D3_3584, 0x13D3_3633, 0x0489_E152, 0x0489_E153, 0x0489_E170,  // Debian 13's btusb.ko, named MT7922 there
        // MT7925
        0x0489_E113, 0x0489_E118, 0x0489_E11E, 0x13D3_3602, 0x13D3_3603, 0x13D3_3604, 0x13D3_3608,
        0x0E8D_0717, 0x0E8D_7925,
        // Debian 13's btusb.ko (linux-image-6.12 amd64), BTUSB_MEDIATEK rows named MT7925 there.
        0x0489_E111, 0x0489_E124, 0x0489_E139, 0x0489_E14E, 0x0489_E14F, 0x0489_E150, 0x0489_E151,
        0x13D3_3628, 0x13D3_3630,
        // MT7920 and the same kernel's other BTUSB_MEDIATEK rows: the chip id read at start names the chip.
        0x0489_E134, 0x0489_E135, 0x0489_E158, 0x13D3_3620, 0x13D3_3621, 0x13D3_3622,
        0x043E_3109, 0x043E_310C, 0x04CA_3801, 0x13D3_3560, 0x13D3_3610
    ]

    /// The file Linux asks for (`btmtk_fw_get_filename`), under `mediatek/`.
    public static func writeFileName<let n: Int>(id: UInt32, version: UInt32, flavour: Bool, into out: inout FixedBytes<n>) {
        let id = id & 0xFFFF
        if id == 0x7925 { append("mt7925/", to: &out) }
        append("BT_RAM_CODE_MT", to: &out)
        appendHex(id, digits: 4, to: &out)
        append(id == 0x7961 && flavour ? "_1a_" : "_1_", to: &out)
        var digits = 1
        let number = (version & 0xFF) + 1
        while number >> (4 * UInt32(digits)) != 0 { digits += 1 }
        appendHex(number, digits: digits, to: &out)
        append("_hdr.bin", to: &out)
    }
}
