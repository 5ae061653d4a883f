import BLEHost
import Chipsets
import EightBall
import CLinux

/// One transport session: what every role's run loop is built from.
struct Session {
    let transport: Transport
    let snoop: BTSnoopWriter?
    /// 1 for the first plug-in, 2 after the dongle came back, …
    let number: Int
    let setup: VendorSetup
    let firmwareDirectory: String
    var metrics: MetricsFile? = nil
    /// The recovery ladder's rung this session was opened for (a port reset), if any.
    var startingRung: RecoveryRung? = nil

    func runLoop<Logic: RoleLogic & ~Copyable>(host: consuming Host, logic: consuming Logic) -> RunLoop<Logic> {
        var loop = RunLoop(host: host, logic: logic, transport: transport, snoop: snoop, setup: setup, startingRung: startingRung)
        loop.firmwareDirectory = firmwareDirectory
        loop.metrics = metrics
        return loop
    }
}
