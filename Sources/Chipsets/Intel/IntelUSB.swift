import BLEHost

/// Intel USB Bluetooth controllers this loader serves (VID 0x8087; Linux btusb
/// `BTUSB_INTEL_COMBINED` entries), with the file a typical unit needs — the
/// exact one is named by Read Version at start.
public enum IntelUSB {
    public static let vendor: UInt16 = 0x8087

    public static func model(product: UInt16) -> (name: StaticString, typicalFile: StaticString)? {
        switch product {
        case 0x0A2B: ("8265", "ibt-12-16.sfi")
        case 0x0AAA: ("9460/9560", "ibt-17-16-1.sfi")
        case 0x0025: ("9160/9260", "ibt-18-16-1.sfi")
        case 0x0026: ("AX201", "ibt-19-0-4.sfi")
        case 0x0029: ("AX200", "ibt-20-1-3.sfi")
        case 0x0032: ("AX210", "ibt-0041-0041.sfi")
        case 0x0033: ("AX211", "ibt-0040-0041.sfi")
        case 0x0036: ("BE200", "ibt-0291-0291.sfi")
        // Further BTUSB_INTEL_COMBINED rows of Debian 13's btusb.ko (linux-image-6.12 amd64),
        // named as the Linux patches that added them name them (linux-bluetooth, Kiran K):
        // "Add support for Intel Madison Peak (MsP2) device" (2022), "Add support for Intel
        // Misty Peak - 8087:0038" (2023), "Add support for Filmore Peak2 (BE201)" and "Add
        // support for Whale Peak2" (2024); none was found for 0040. Their file is named by
        // Read Version at start (`btintel_get_fw_name_tlv`).
        case 0x0035: ("Madison Peak 2", Self.namedAtStart)
        case 0x0037: ("BE201 (Filmore Peak 2)", Self.namedAtStart)
        case 0x0038: ("Misty Peak", Self.namedAtStart)
        case 0x0039: ("Whale Peak 2", Self.namedAtStart)
        case 0x0040: ("model unknown", Self.namedAtStart)
        default: nil
        }
    }

    /// The ids the file is named from are read at start (Intel Read Version); from
    /// hardware variant 0x1e on a boot loader takes an intermediate loader first.
    /// It fits `Capacity.ChipsetText` (128 bytes): a longer text is not appended at all.
    static let namedAtStart: StaticString =
        "ibt-<cnvi>-<cnvr>.sfi (named at start; variant 0x1e and later: intermediate loader not supported yet)"

    public static func isKnown(vendor: UInt16, product: UInt16) -> Bool {
        vendor == Self.vendor && model(product: product) != nil
    }
}
