import BLEHost
import Chipsets

/// What a chipset's set-up asks of the link after its last step: one small
/// value the run loop hands to the `SetupLink` only when it changed (nothing
/// is pushed per pass), compared only while a set-up step may have run.
struct SetupWishes: Equatable {
    /// Commands go on USB's bulk OUT endpoint (an Intel boot loader's Secure Send).
    var commandsOnBulk = false
    /// Bulk IN carries HCI events (that boot loader's answers, as Linux btusb_recv_bulk_intel).
    var eventsOnBulk = false
    /// The controller's UART rate, which the port follows; 0: no change asked.
    var baudRate: UInt32 = 0
}

extension SetupWishes {
    /// As the set-up's status says: the bulk endpoints only while it runs (or
    /// waits for its files); the rate whatever the state, since a chip's
    /// restart changes it after the set-up too, and an exit line names it.
    init(_ status: borrowing ChipsetStatus, state: DriverState) {
        switch state {
        case .settingUp, .needsFiles:
            self.init(commandsOnBulk: status.commandOnBulk, eventsOnBulk: status.eventsOnBulk, baudRate: status.portBaudRate)
        case .running, .finished:
            self.init(baudRate: status.portBaudRate)
        }
    }
}
