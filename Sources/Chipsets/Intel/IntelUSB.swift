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
        // Further BTUSB_INTEL_COMBINED rows of Debian 13's btusb.ko (linux-image-6.12 amd64).
        case 0x0035, 0x0037, 0x0038, 0x0039, 0x0040: ("(Read Version names it)", "ibt-*.sfi (named at start)")
        default: nil
        }
    }

    public static func isKnown(vendor: UInt16, product: UInt16) -> Bool {
        vendor == Self.vendor && model(product: product) != nil
    }
}
