/// GATT attribute types (Core Vol 3 Part G §3).
public enum GATTType {
    public static let primaryService: UInt16 = 0x2800
    public static let secondaryService: UInt16 = 0x2801
    public static let include: UInt16 = 0x2802
    public static let characteristic: UInt16 = 0x2803
    public static let clientCharacteristicConfiguration: UInt16 = 0x2902
    public static let gapService: UInt16 = 0x1800
    public static let gattService: UInt16 = 0x1801
    public static let deviceName: UInt16 = 0x2A00
    public static let appearance: UInt16 = 0x2A01
    public static let serviceChanged: UInt16 = 0x2A05
}
