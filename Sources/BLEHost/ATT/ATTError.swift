/// ATT error codes (Core Vol 3 Part F §3.4.1.1).
public enum ATTError {
    public static let invalidHandle: UInt8 = 0x01
    public static let readNotPermitted: UInt8 = 0x02
    public static let writeNotPermitted: UInt8 = 0x03
    public static let invalidPDU: UInt8 = 0x04
    public static let insufficientAuthentication: UInt8 = 0x05
    public static let requestNotSupported: UInt8 = 0x06
    public static let invalidOffset: UInt8 = 0x07
    public static let prepareQueueFull: UInt8 = 0x09
    public static let attributeNotFound: UInt8 = 0x0A
    public static let attributeNotLong: UInt8 = 0x0B
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    public static let unlikelyError: UInt8 = 0x0E
    public static let unsupportedGroupType: UInt8 = 0x10
    public static let valueNotAllowed: UInt8 = 0x13
    /// Common profile error (Core Supplement Part B §1.2): CCCD improperly configured.
    public static let cccdImproperlyConfigured: UInt8 = 0xFD
}
