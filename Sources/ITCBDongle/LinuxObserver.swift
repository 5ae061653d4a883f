import CLinux
import BLEHost
import Chipsets

/// The Linux board's ears on the driver: host events to the log and to
/// systemd, packets to btsnoop and the trace.
struct LinuxObserver: HostLoopObserver {
    let snoop: BTSnoopWriter?
    let notifier: SystemdNotifier?
    /// The link's name is read when a line needs it: a serial port's changes with its rate.
    let transport: Transport
    /// A central came or went, or advertising started or stopped: the metrics
    /// and status line are due now.
    var connectionsChanged = false
    /// The controller advertises now (--metrics-file's itcb_dongle_advertising).
    var advertising = false

    mutating func observe(_ event: HostEvent, host: borrowing Host) {
        if case .ready = event { SilentStarts.clear() }
        logHostEvent(event, host: host)
        notifier?.observe(event, host: host, role: host.configuration.role)
        if case .connected = event { connectionsChanged = true } else if case .disconnected = event { connectionsChanged = true }
        switch event {
        case .advertising(let enabled):
            connectionsChanged = connectionsChanged || advertising != enabled
            advertising = enabled
        case .ready, .controllerTimeout(_, true), .hardwareError(_, true): advertising = false  // a reset ends it
        default: break
        }
    }

    mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer) {
        snoop?.record(type, packet, received: true)
        if Log.level >= .debug {
            if type == H4PacketType.acl, let line = attNarration(packet, outgoing: false) { Log.debug(line) }
            Log.trace("< \(hexByte: type) \(hexDump(packet))")
        }
    }

    /// Line noise can go on for as long as it likes: one line a second at most (`LineLimiter`).
    /// (Its reason appended into the line: a String made of it cost String's joins.)
    mutating func framingLost(_ why: FramingLoss) {
        Log.repeated(.framingLoss, .warning, {
            var line = BuiltText.Builder()
            line.appendLiteral("H4 stream from ")
            line.appendInterpolation(transport.description)
            line.appendLiteral(" out of sync (")
            switch why {
            case .notHCI(let count):
                line.appendInterpolation(count)
                line.appendLiteral(" byte(s) or packet(s) that are not HCI")
            case .stalled:
                line.appendLiteral("a packet began and never finished")
            }
            line.appendLiteral("); resetting the controller")
            return BuiltText(line)
        }())
    }
}
