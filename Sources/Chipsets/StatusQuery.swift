import BLEHost

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
