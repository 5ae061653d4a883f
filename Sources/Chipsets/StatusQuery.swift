import BLEHost

/// A read, taken as a visit: `VendorSetup.run` holds the table mutably anyway,
/// and a chipset borrowed by value is copied first (a `ChipsetReader` made
/// `run`'s armv7em frame 1,144 bytes, this 520).
struct StatusQuery: ChipsetVisitor {
    mutating func visit<C: Chipset>(_ chipset: inout C) -> ChipsetStatus {
        var status = ChipsetStatus()
        status.answerTimeout = chipset.answerTimeout
        status.pause = chipset.pause
        status.commandOnBulk = chipset.commandOnBulk
        status.eventsOnBulk = chipset.eventsOnBulk
        status.portBaudRate = chipset.portBaudRate
        status.sharedDefaultAddress = chipset.sharedDefaultAddress
        status.quirks = C.info.quirks
        return status
    }
}
