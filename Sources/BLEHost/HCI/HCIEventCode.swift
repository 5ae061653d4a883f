/// HCI event codes (Core Vol 4 Part E §7.7).
public enum HCIEventCode {
    public static let disconnectionComplete: UInt8 = 0x05
    public static let encryptionChange: UInt8 = 0x08
    public static let commandComplete: UInt8 = 0x0E
    public static let commandStatus: UInt8 = 0x0F
    public static let hardwareError: UInt8 = 0x10
    public static let numberOfCompletedPackets: UInt8 = 0x13
    public static let dataBufferOverflow: UInt8 = 0x1A
    public static let leMeta: UInt8 = 0x3E
}
