import CLinux
import BLEHost
import Chipsets

/// The Linux board's part of the recovery ladder. The decisions
/// are the driver's (`RecoveryRung`: HCI Reset, then a port reset and a fresh
/// bring-up, then the end); the board logs each rung once, counts it, reopens
/// the dongle with a port reset, and withholds the systemd watchdog's ping
/// while the controller does not answer.
enum RecoveryLadder {
    /// Port resets the ladder asked for in this process (its second rung).
    nonisolated(unsafe) static var portResets = 0
    /// A dongle that re-enumerates at its port reset is waited for this long
    /// (ms): less than the unit's WatchdogSec (10 s) after the step's ping.
    static let reenumerationWait: UInt64 = 8_000

    /// A step the board carries out outside the run loop (the port reset, the
    /// wait for a re-enumerating dongle) begins: one watchdog ping and the
    /// status, so systemd gives the step its time. Bounded: each step ends in
    /// a fresh bring-up or in exit 4; without a controller answering, no
    /// other ping follows.
    /// (The status a BuiltText: its callers' text is built out of line.)
    @inline(never)
    static func stepBegins(_ status: consuming BuiltText) {
        guard let notifier = SystemdNotifier() else { return }
        var message: BuiltText = notifier.watchdogInterval == nil ? "STATUS=" : "WATCHDOG=1\nSTATUS="
        message.append(status)
        notifier.send(message)
        notifier.close()
    }
}

extension RunLoop where Logic: ~Copyable {
    /// The session's end when the driver ended on a ladder rung (its log line
    /// and what the board does next), nil for any other end.
    @inline(never)
    mutating func ladderStep(_ end: HostLoopEnd) -> SessionEnd? {
        switch (end, driver.recoveryRung) {
        case (.portResetWanted, .portReset?):
            // Step 2, one line and one status in three forms: after the chip's own
            // reset, the port reset Linux queues after it (MediaTek:
            // `btusb_mtk_reset`); a chip with its own reset, that reset first; else
            // the port reset (USB) or power cycle (a Raspberry Pi's UART radio,
            // SerialTransport). Each ends in re-enumeration and a fresh set-up.
            let afterChipReset = driver.setup.context.resetFirst
            let chipResetFirst = !afterChipReset && driver.setup.status.quirks.ownReset
            var step = ""
            if !chipResetFirst {
                RecoveryLadder.portResets += 1
                step = beginPortReset()
            }
            var line = BuiltText.Builder()
            if afterChipReset {
                // The chipset's label and what its reset did (escaped: they may carry
                // what the controller reported), read from its description.
                // (Escaped straight into the line; decoded first, as `text` repairs what is not UTF-8.)
                let chipset = driver.setup.describe()
                if let chipset { line.appendInterpolation(escapedText: chipset.label) } else { line.appendLiteral("controller") }
                line.appendLiteral(" at ")
                line.appendInterpolation(transport.description)
                line.appendLiteral(": ")
                if let chipset, !chipset.summary.isEmpty {
                    line.appendInterpolation(escapedText: chipset.summary)
                    line.appendLiteral("; ")
                }
            } else {
                line.appendLiteral("controller at ")
                line.appendInterpolation(transport.description)
                line.appendLiteral(" did not answer after its HCI Reset either; ")
            }
            if chipResetFirst {
                line.appendLiteral("resetting the chip with its own reset, then its USB port, then bringing it up afresh (recovery step 2 of 3)")
            } else {
                line.appendInterpolation(step)
                line.appendLiteral(afterChipReset ? " and bringing it up afresh, as Linux does after that reset" : " and bringing it up afresh")
                line.appendLiteral(" (recovery step 2 of 3, port reset ")
                line.appendInterpolation(RecoveryLadder.portResets)
                line.appendLiteral(")")
            }
            // Its own kind after the chip's reset: it follows that reset's line within the
            // second, and the two halves of one step must both be said (each at most once a second).
            Log.repeated(afterChipReset ? .chipPortReset : .recoveryStep, .warning, BuiltText(line))
            // The status: "controller not responding; resetting the chip", or what
            // came before and "STEP (port reset N)". One builder for the three.
            var status = BuiltText.Builder()
            status.appendLiteral(afterChipReset ? "controller reset; " : "controller not responding; ")
            if chipResetFirst {
                status.appendLiteral("resetting the chip")
            } else {
                status.appendInterpolation(step)
                status.appendLiteral(" (port reset ")
                status.appendInterpolation(RecoveryLadder.portResets)
                status.appendLiteral(")")
            }
            RecoveryLadder.stepBegins(BuiltText(status))
            return chipResetFirst ? .reopenWithChipReset : .reopenWithPortReset(ladder: true)
        case (.controllerSilent, .exit?), (.notReady, .exit?):
            var line = BuiltText.Builder()
            line.appendLiteral("controller at ")
            line.appendInterpolation(transport.description)
            line.appendLiteral(" still silent after an HCI Reset")
            if driver.settings.offersPortResetRung {
                line.appendLiteral(" and ")
                line.appendInterpolation(transport.portRecovery?.portResetName ?? "")
            }
            line.appendLiteral("; exiting with code ")
            line.appendInterpolation(Exit.controller)
            line.appendLiteral(" for the service to restart it (recovery step 3 of 3)")
            Log.error(BuiltText(line))
            return .exit(Exit.controller)
        default:
            return nil
        }
    }

    /// The ladder's port reset begins on the link's recovery ("resetting its
    /// USB port"); a link without one (TCP) has nothing to say.
    func beginPortReset() -> String { transport.portRecovery?.beginPortReset() ?? "" }

    /// Whether the controller answered a command within two probe periods
    /// (a probe's round trip, with room for the probe's own timing); true
    /// when nothing probes it (no --health-check, no watchdog).
    func controllerAnswers(now: UInt64) -> Bool {
        guard let interval = driver.settings.healthInterval else { return true }
        return now < driver.lastAnswer + 2 * interval
    }
}
