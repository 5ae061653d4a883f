import BLEHost

/// The active chipset's state as the driver and the board read it.
public struct ChipsetStatus: Equatable {
    public var answerTimeout: UInt64 = 10_000
    public var pause: UInt64 = 0
    public var commandOnBulk = false
    public var eventsOnBulk = false
    public var portBaudRate: UInt32 = 0
    public var sharedDefaultAddress: BDAddress? = nil
    public var quirks = ChipsetQuirks()
    public init() {}
}
