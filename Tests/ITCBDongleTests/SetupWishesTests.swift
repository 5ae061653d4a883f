import Testing
import Chipsets
@testable import ITCBDongle

/// What the run loop hands a `SetupLink` (SetupWishes.swift): the bulk
/// endpoints while the set-up runs, the controller's rate in every state.
@Suite struct SetupWishesTests {
    @Test func bulkWishesHoldWhileTheSetUpRunsTheRateAlways() {
        var status = ChipsetStatus()
        status.commandOnBulk = true
        status.eventsOnBulk = true
        status.portBaudRate = 3_000_000
        let all = SetupWishes(commandsOnBulk: true, eventsOnBulk: true, baudRate: 3_000_000)
        #expect(SetupWishes(status, state: .settingUp) == all)
        #expect(SetupWishes(status, state: .needsFiles) == all, "reading its files changes nothing on the link")
        #expect(SetupWishes(status, state: .running) == SetupWishes(baudRate: 3_000_000))
        #expect(SetupWishes(status, state: .finished(.setupFailed)) == SetupWishes(baudRate: 3_000_000))
        #expect(SetupWishes(ChipsetStatus(), state: .settingUp) == SetupWishes(), "no chipset: nothing to hand over")
    }
}
