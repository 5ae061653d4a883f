import BLEHost

/// A read, taken as a visit: `VendorSetup.run` holds the table mutably anyway,
/// and a driver borrowed by value is copied first (a `ChipsetReader` made
/// `run`'s armv7em frame 1,144 bytes, this 520).
struct StatusQuery: ChipsetVisitor {
    mutating func visit<D: ChipsetDriver>(_ driver: inout D) -> ChipsetStatus {
        var status = ChipsetStatus()
        status.answerTimeout = driver.answerTimeout
        status.pause = driver.pause
        status.commandOnBulk = driver.commandOnBulk
        status.eventsOnBulk = driver.eventsOnBulk
        status.portBaudRate = driver.portBaudRate
        status.sharedDefaultAddress = driver.sharedDefaultAddress
        status.quirks = D.info.quirks
        return status
    }
}
