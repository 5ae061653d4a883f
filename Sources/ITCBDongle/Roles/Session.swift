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

    /// The loop over `RoleDispatch`, the one logic type of every role: the loop
    /// and the host's generic code are compiled once, not once per role. The
    /// host is built where it lives; `build` fills its database and makes the
    /// role's logic.
    func runLoop(configuration: HostConfiguration, build: (inout Host) -> RoleDispatch) -> RunLoop<RoleDispatch> {
        var loop = RunLoop(configuration: configuration, transport: transport, snoop: snoop, setup: setup,
                           startingRung: startingRung, build: build)
        loop.firmwareDirectory = firmwareDirectory
        loop.metrics = metrics
        return loop
    }
}
