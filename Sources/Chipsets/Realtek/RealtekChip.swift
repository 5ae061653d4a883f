import BLEHost

/// A Realtek chip family, matched from Read Local Version Information of the
/// un-patched ROM (LMP subversion, HCI revision, HCI version).
public enum RealtekChip: UInt8, Sendable {
    case rtl8723b, rtl8723d, rtl8821a, rtl8821c, rtl8761a, rtl8761bu, rtl8761cu
    case rtl8822b, rtl8822c, rtl8852a, rtl8852b, rtl8852c

    /// Every chip, for tables (raw values are dense from 0).
    public static let count = 12

    /// The ROM's LMP subversion (the "ROM id" shared by a family).
    public var romLMPSubversion: UInt16 { UInt16(truncatingIfNeeded: Self.romRows[Int(rawValue)] >> 16) }

    /// HCI revision and HCI version of the ROM; version 0 matches any.
    public var romHCI: (revision: UInt16, version: UInt8) {
        let row = Self.romRows[Int(rawValue)]
        return (UInt16(truncatingIfNeeded: row >> 8) & 0xFF, UInt8(truncatingIfNeeded: row))
    }

    /// Each chip's ROM (by raw value) as LMP subversion << 16 | HCI revision << 8 | HCI
    /// version: data walked by `match` (over `switch`es, its loop was unrolled into 450 bytes).
    static let romRows: InlineArray<12, UInt32> = [
        0x8723_0B06,  // RTL8723B
        0x8723_0D08,  // RTL8723D
        0x8821_0A06,  // RTL8821A
        0x8821_0C08,  // RTL8821C
        0x8761_0A06,  // RTL8761A
        0x8761_0B0A,  // RTL8761B/BU
        0x8761_0E00,  // RTL8761CU
        0x8822_0B07,  // RTL8822B
        0x8822_0C0A,  // RTL8822C
        0x8852_0A0B,  // RTL8852A
        0x8852_0B0B,  // RTL8852B
        0x8852_0C0C   // RTL8852C
    ]

    /// The chip refuses to run without its config file.
    public var configRequired: Bool {
        switch self {
        case .rtl8723d, .rtl8822b: true
        default: false
        }
    }

    public var name: StaticString {
        switch self {
        case .rtl8723b: "RTL8723B"
        case .rtl8723d: "RTL8723D"
        case .rtl8821a: "RTL8821A"
        case .rtl8821c: "RTL8821C"
        case .rtl8761a: "RTL8761A"
        case .rtl8761bu: "RTL8761B/BU"
        case .rtl8761cu: "RTL8761CU"
        case .rtl8822b: "RTL8822B"
        case .rtl8822c: "RTL8822C"
        case .rtl8852a: "RTL8852A"
        case .rtl8852b: "RTL8852B"
        case .rtl8852c: "RTL8852C"
        }
    }

    /// File under `<firmware dir>/rtl_bt/` (Debian package firmware-realtek).
    public var firmwareFile: StaticString {
        switch self {
        case .rtl8723b: "rtl8723b_fw.bin"
        case .rtl8723d: "rtl8723d_fw.bin"
        case .rtl8821a: "rtl8821a_fw.bin"
        case .rtl8821c: "rtl8821c_fw.bin"
        case .rtl8761a: "rtl8761a_fw.bin"
        case .rtl8761bu: "rtl8761bu_fw.bin"
        case .rtl8761cu: "rtl8761cu_fw.bin"
        case .rtl8822b: "rtl8822b_fw.bin"
        case .rtl8822c: "rtl8822cu_fw.bin"
        case .rtl8852a: "rtl8852au_fw.bin"
        case .rtl8852b: "rtl8852bu_fw.bin"
        case .rtl8852c: "rtl8852cu_fw.bin"
        }
    }

    public var configFile: StaticString {
        switch self {
        case .rtl8723b: "rtl8723b_config.bin"
        case .rtl8723d: "rtl8723d_config.bin"
        case .rtl8821a: "rtl8821a_config.bin"
        case .rtl8821c: "rtl8821c_config.bin"
        case .rtl8761a: "rtl8761a_config.bin"
        case .rtl8761bu: "rtl8761bu_config.bin"
        case .rtl8761cu: "rtl8761cu_config.bin"
        case .rtl8822b: "rtl8822b_config.bin"
        case .rtl8822c: "rtl8822cu_config.bin"
        case .rtl8852a: "rtl8852au_config.bin"
        case .rtl8852b: "rtl8852bu_config.bin"
        case .rtl8852c: "rtl8852cu_config.bin"
        }
    }

    /// The chip of an un-patched ROM, or nil (not Realtek, or already patched:
    /// a patched controller reports the patch's subversion instead).
    public static func match(lmpSubversion: UInt16, hciRevision: UInt16, hciVersion: UInt8) -> RealtekChip? {
        for index in romRows.indices {
            let row = romRows[index]
            guard row >> 16 == UInt32(lmpSubversion), (row >> 8) & 0xFF == UInt32(hciRevision) else { continue }
            let version = UInt8(truncatingIfNeeded: row)
            if version == hciVersion || version == 0 { return RealtekChip(rawValue: UInt8(index)) }
        }
        return nil
    }

    /// The ROM LMP subversion an epatch project id is built for (nil: unknown id).
    public static func romLMPSubversion(projectID: UInt8) -> UInt16? {
        switch projectID {
        case 1, 9: 0x8723
        case 2, 10: 0x8821
        case 3, 14, 51: 0x8761
        case 8, 13: 0x8822
        case 18, 20, 25: 0x8852
        default: nil
        }
    }

    /// USB dongles served: Realtek's own VID (Linux btusb's vendor catch-all,
    /// `USB_VENDOR_AND_INTERFACE_INFO(0x0bda, 0xe0, 0x01, 0x01)`), the rows whose
    /// chip `likely` names, and the OEM rows of Debian 13's btusb.ko
    /// (BTUSB_REALTEK, linux-image-6.12 amd64) whose chip the ROM names at start.
    public static func isKnownUSB(vendor: UInt16, product: UInt16) -> Bool {
        if vendor == 0x0BDA || hasLikelyChip(vendor: vendor, product: product) { return true }
        let id = (UInt32(vendor) << 16) | UInt32(product)
        for index in oemRows.indices where oemRows[index] == id { return true }
        return false
    }

    /// The OEM rows whose chip the ROM names at start (VID:PID as one number).
    /// Tables are data walked by a loop: a `switch` over them was ~10 bytes of code a row.
    static let oemRows: InlineArray<37, UInt32> = [
        0x0489_E085, 0x0489_E08B, 0x0489_E122, 0x0489_E123, 0x0489_E125, 0x0489_E12F, 0x0489_E130,
        0x04F2_B49F, 0x0930_021D, 0x0B05_17DC, 0x1357_C123, 0x13D3_3394, 0x13D3_3410, 0x13D3_3414,
        0x13D3_3416, 0x13D3_3458, 0x13D3_3459, 0x13D3_3461, 0x13D3_3462, 0x13D3_3494, 0x13D3_3533,
        0x13D3_3570, 0x13D3_3572, 0x13D3_3591, 0x13D3_3612, 0x13D3_3616, 0x13D3_3617, 0x14B0_047A,
        0x2001_332A, 0x2357_0607, 0x2B89_6275, 0x2C4E_0115, 0x2C4E_0128, 0x3625_010B, 0x37AD_0600,
        0x6655_8771, 0x7392_E611
    ]

    /// The VID:PID pairs whose chip `likely` names (Linux btusb / Bumble list).
    public static func hasLikelyChip(vendor: UInt16, product: UInt16) -> Bool {
        likelyRow(vendor: vendor, product: product) != nil
    }

    /// The chip of each VID:PID pair `likely` knows (VID:PID as one number),
    /// by chip; Bumble's list groups them so.
    static let likelyRows: InlineArray<49, (UInt32, RealtekChip)> = [
        (0x0BDA_B009, .rtl8723d), (0x2FF8_B011, .rtl8723d), (0x7392_A611, .rtl8723d),
        (0x0BDA_B00C, .rtl8821c), (0x13D3_3529, .rtl8821c),
        (0x0B05_190E, .rtl8761bu), (0x0BDA_8771, .rtl8761bu), (0x0BDA_877B, .rtl8761bu), (0x0BDA_A728, .rtl8761bu),
        (0x0BDA_A729, .rtl8761bu), (0x2230_0016, .rtl8761bu), (0x2357_0604, .rtl8761bu), (0x2550_8761, .rtl8761bu),
        (0x2B89_8761, .rtl8761bu), (0x2C0A_8761, .rtl8761bu), (0x7392_C611, .rtl8761bu),
        (0x0B05_1BF6, .rtl8761cu), (0x0BDA_C761, .rtl8761cu), (0x7392_F611, .rtl8761cu),
        (0x0B05_185C, .rtl8822b), (0x13D3_3526, .rtl8822b),
        (0x04C5_161F, .rtl8822c), (0x04CA_4005, .rtl8822c), (0x0B05_18EF, .rtl8822c), (0x0BDA_C123, .rtl8822c),
        (0x0BDA_C822, .rtl8822c), (0x0CB5_C547, .rtl8822c), (0x1358_C123, .rtl8822c), (0x13D3_3548, .rtl8822c),
        (0x13D3_3549, .rtl8822c), (0x13D3_3553, .rtl8822c), (0x13D3_3555, .rtl8822c), (0x2FF8_3051, .rtl8822c),
        (0x04C5_165C, .rtl8852a), (0x04CA_4006, .rtl8852a), (0x0BDA_2852, .rtl8852a), (0x0BDA_385A, .rtl8852a),
        (0x0BDA_4852, .rtl8852a), (0x0BDA_C852, .rtl8852a), (0x0CB8_C549, .rtl8852a),
        (0x0BDA_887B, .rtl8852b), (0x0CB8_C559, .rtl8852b), (0x13D3_3571, .rtl8852b),
        (0x04C5_1675, .rtl8852c), (0x04CA_4007, .rtl8852c), (0x0CB8_C558, .rtl8852c), (0x13D3_3586, .rtl8852c),
        (0x13D3_3587, .rtl8852c), (0x13D3_3592, .rtl8852c)
    ]

    static func likelyRow(vendor: UInt16, product: UInt16) -> RealtekChip? {
        let id = (UInt32(vendor) << 16) | UInt32(product)
        for index in likelyRows.indices where likelyRows[index].0 == id { return likelyRows[index].1 }
        return nil
    }
}

extension RealtekChip {
    /// The chip most likely behind a Realtek VID:PID.
    public static func likely(vendor: UInt16, product: UInt16) -> RealtekChip {
        likelyRow(vendor: vendor, product: product) ?? .rtl8761bu
    }
}
