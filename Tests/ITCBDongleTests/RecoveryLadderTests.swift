import Testing
@testable import ITCBDongle

/// The restart backoff of a dead dongle (RecoveryLadder.swift): the wait
/// before a start after N starts in a row ended with a silent controller.
@Suite struct SilentStartsTests {
    @Test func theWaitDoublesFromFiveSecondsUpToTwoMinutes() {
        #expect(SilentStarts.wait(after: 0) == 0, "a start after a good one does not wait")
        #expect([1, 2, 3, 4, 5].map(SilentStarts.wait(after:)) == [5_000, 10_000, 20_000, 40_000, 80_000])
        #expect(SilentStarts.wait(after: 6) == 120_000)
        #expect(SilentStarts.wait(after: 1_000_000) == 120_000, "no overflow for a count that kept growing")
    }
}
