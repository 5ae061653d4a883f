/// A link whose controller can be brought back from outside HCI: a USB port
/// reset, a Raspberry Pi UART radio's power cycle, a UART reopened at its other
/// rate. The run loop asks a transport for it (`Transport.portRecovery`); a
/// link without one (TCP) leaves the controller to HCI Reset alone.
protocol PortRecovery: AnyObject {
    /// A controller silent at its first command can be tried once more: a USB
    /// dongle opened without a port reset (one that hangs after a warm start),
    /// a UART at its other rate, then its power cycle.
    var offersPortReset: Bool { get }
    /// Said once before that try.
    func warnHungAfterWarmStart()
    /// The recovery ladder's second rung is there: a USB port reset, or a
    /// power cycle where a Pi's radio has its power line.
    var canResetPort: Bool { get }
    /// That rung begins: what it does, for the log ("resetting its USB port").
    func beginPortReset() -> String
    /// That rung, named ("a USB port reset").
    var portResetName: String { get }
}
