import Testing
@testable import BLEHost
import TestSupport

/// The enable tracker the advertiser and the scanner share (LE Set Advertising
/// Enable, LE Set Scan Enable): what was asked, what the controller confirmed.
@Suite struct EnableTrackerTests {
    @Test func theCommandCarriesTheValueAndIsTrackedUntilAnswered() {
        var tracker = EnableTracker(opcode: HCIOpcode.leSetScanEnable)
        var command = tracker.command(true)
        command.finishCommand()
        #expect(command.bytes == hex("01 0c 20 01 01"))
        #expect(tracker.target && tracker.mayBeOn && !tracker.enabled && tracker.pending == 1)
        #expect(tracker.answered(true, status: HCIStatus.success) == .changed(true))
        #expect(tracker.enabled && tracker.requested == nil && tracker.pending == 0)
        _ = tracker.command(true)
        #expect(tracker.answered(true, status: HCIStatus.success) == .unchanged)
    }

    @Test func disablingWhatIsOffIsNotAFailure() {
        var tracker = EnableTracker(opcode: HCIOpcode.leSetAdvertiseEnable)
        _ = tracker.command(false)
        #expect(tracker.answered(false, status: HCIStatus.commandDisallowed) == .unchanged)
        _ = tracker.command(true)
        #expect(tracker.answered(true, status: HCIStatus.commandDisallowed) == .failed(HCIStatus.commandDisallowed))
        #expect(!tracker.enabled && tracker.requested == nil)
    }

    @Test func theLastRequestIsTheTargetWhileAnswersAreDue() {
        var tracker = EnableTracker(opcode: HCIOpcode.leSetAdvertiseEnable)
        _ = tracker.command(true)
        _ = tracker.command(false)
        #expect(!tracker.target && tracker.mayBeOn == false && tracker.pending == 2)
        #expect(tracker.answered(true, status: HCIStatus.success) == .changed(true))
        #expect(!tracker.target && tracker.mayBeOn)  // still asked to stop
        #expect(tracker.answered(false, status: HCIStatus.success) == .changed(false))
        #expect(!tracker.target && tracker.requested == nil)
        _ = tracker.command(true)
        #expect(tracker.answered(true, status: HCIStatus.success) == .changed(true))
        #expect(tracker.stoppedByController() && !tracker.enabled && !tracker.stoppedByController())
        tracker.reset()
        #expect(!tracker.mayBeOn && tracker.pending == 0)
    }
}
