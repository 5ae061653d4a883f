import BLEHost

/// Intel vendor opcodes (OGF 0x3F).
public enum IntelOpcode {
    /// Vendor reset: type, patch enable, DDC reload, boot option, boot address (LE32). No Command Complete.
    public static let reset: UInt16 = 0xFC01
    /// Parameter 0xFF asks for the TLV form (legacy chips ignore it and answer the fixed form).
    public static let readVersion: UInt16 = 0xFC05
    /// Parameters: fragment type (0 CSS header, 1 data, 2 signature, 3 public key), up to 252 bytes.
    public static let secureSend: UInt16 = 0xFC09
    /// Legacy boot loader: device revision, limited-CCE flag, OTP address …
    public static let readBootParams: UInt16 = 0xFC0D
    /// Inside the firmware payload: its first 4 parameter bytes are the boot address.
    public static let writeBootParams: UInt16 = 0xFC0E
    /// One DDC record (length byte + ID + value) per command.
    public static let writeDeviceConfig: UInt16 = 0xFC8B
    /// Vendor event (0xFF) kinds, first parameter byte.
    public static let eventBoot: UInt8 = 0x02
    public static let eventDownloadComplete: UInt8 = 0x06
}
