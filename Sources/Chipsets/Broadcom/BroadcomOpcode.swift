import BLEHost

/// Broadcom vendor opcodes (OGF 0x3F).
public enum BroadcomOpcode {
    /// No parameters: the ROM waits for patchram records.
    public static let downloadMinidriver: UInt16 = 0xFC2E
    /// A patchram record: address (LE32) and bytes.
    public static let writeRAM: UInt16 = 0xFC4C
    /// The last record: jump to the address (0xFFFFFFFF: the patched reset vector); the chip restarts.
    public static let launchRAM: UInt16 = 0xFC4E
    /// Parameters: 2 zero bytes, the rate (LE32). Answered at the old rate.
    public static let updateUARTBaudRate: UInt16 = 0xFC18
}
