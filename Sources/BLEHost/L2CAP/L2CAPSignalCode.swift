/// LE signaling channel codes (Core Vol 3 Part A §4).
public enum L2CAPSignalCode {
    public static let commandReject: UInt8 = 0x01
    public static let disconnectionRequest: UInt8 = 0x06
    public static let disconnectionResponse: UInt8 = 0x07
    public static let connectionParameterUpdateRequest: UInt8 = 0x12
    public static let connectionParameterUpdateResponse: UInt8 = 0x13
    public static let leCreditBasedConnectionRequest: UInt8 = 0x14
    public static let leCreditBasedConnectionResponse: UInt8 = 0x15
    public static let flowControlCredit: UInt8 = 0x16
    public static let creditBasedConnectionRequest: UInt8 = 0x17
    public static let creditBasedConnectionResponse: UInt8 = 0x18
    public static let creditBasedReconfigureResponse: UInt8 = 0x1A
}
