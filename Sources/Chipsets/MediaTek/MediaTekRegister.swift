import BLEHost

/// Registers Linux reads and writes.
public enum MediaTekRegister {
    public static let legacyID: UInt32 = 0x8000_0008
    public static let chipID: UInt32 = 0x7001_0200
    public static let firmwareVersion: UInt32 = 0x8002_1004
    public static let flavour: UInt32 = 0x7001_0020
    /// Endpoint reset option, written 0x00010001 after the download.
    public static let endpointResetOption: UInt32 = 0x7401_1890
    public static let endpointResetInOut: UInt32 = 0x0001_0001
    // The Bluetooth subsystem reset's registers (UHW space).
    public static let misc: UInt32 = 0x7000_2510
    public static let resetDone: UInt32 = 0x0000_0100
    public static let subsystemReset: UInt32 = 0x7000_2610
    public static let resetConnV3: UInt32 = 0x7002_8610
    public static let udmaInterrupt: UInt32 = 0x7400_0024
    public static let udmaInterrupt1: UInt32 = 0x7400_0308
    public static let watchdogStatus: UInt32 = 0x7400_03A0
}
