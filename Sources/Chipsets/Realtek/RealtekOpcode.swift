import BLEHost

/// Realtek vendor opcodes (OGF 0x3F).
public enum RealtekOpcode {
    /// Returns status, ROM version (one byte).
    public static let readROMVersion: UInt16 = 0xFC6D
    /// Parameters: index (bit 7 = last fragment), up to 252 bytes. Returns status, index.
    public static let download: UInt16 = 0xFC20
}
