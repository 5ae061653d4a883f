import BLEHost

/// The Linux board's part of the recovery ladder (issue 30). The decisions
/// are the driver's (`RecoveryRung`: HCI Reset, then a port reset and a fresh
/// bring-up, then the end); the board logs each rung once, counts it, reopens
/// the dongle with a port reset, and withholds the systemd watchdog's ping
/// while the controller does not answer.
enum RecoveryLadder {
    /// Port resets the ladder asked for in this process (its second rung).
    nonisolated(unsafe) static var portResets = 0
    /// A dongle that re-enumerates at its port reset is waited for this long (ms).
    static let reenumerationWait: UInt64 = 10_000
}

extension RunLoop where Logic: ~Copyable {
    /// The session's end when the driver ended on a ladder rung (its log line
    /// and what the board does next), nil for any other end.
    mutating func ladderStep(_ end: DriverEnd) -> SessionEnd? {
        switch (end, driver.recoveryRung) {
        case (.portResetWanted, .portReset?):
            RecoveryLadder.portResets += 1
            Log.warning("controller at \(transport.description) did not answer after its HCI Reset either; resetting its USB port and bringing it up afresh (recovery step 2 of 3, port reset \(RecoveryLadder.portResets))")
            return .reopenWithPortReset(ladder: true)
        case (.controllerSilent, .exit?), (.notReady, .exit?):
            let tried = driver.settings.offersPortResetRung ? "an HCI Reset and a USB port reset" : "an HCI Reset"
            Log.error("controller at \(transport.description) still silent after \(tried); exiting with code \(Exit.controller) for the service to restart it (recovery step 3 of 3)")
            return .exit(Exit.controller)
        default:
            return nil
        }
    }

    /// Whether the controller answered a command within two probe periods
    /// (a probe's round trip, with room for the probe's own timing); true
    /// when nothing probes it (no --health-check, no watchdog).
    func controllerAnswers(now: UInt64) -> Bool {
        guard let interval = driver.settings.healthInterval else { return true }
        return now < driver.lastAnswer + 2 * interval
    }
}
