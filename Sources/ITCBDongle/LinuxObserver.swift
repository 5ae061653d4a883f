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
    mutating func framingLost(_ why: FramingLoss) {
        Log.repeated(.framingLoss, .warning, "H4 stream from \(transport.description) out of sync (\(why.reason)); resetting the controller")
    }
}

extension FramingLoss {
    var reason: String {
        switch self {
        case .notHCI(let count): "\(count) byte(s) or packet(s) that are not HCI"
        case .stalled: "a packet began and never finished"
        }
    }
}
