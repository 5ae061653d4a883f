import CLinux
import BLEHost
import Chipsets

/// The counts --metrics-file and the systemd status line show: one session's
/// (read from the host, the driver, the transport and the 8-Ball), or the
/// process's (every session's added up: a re-plug or a port reset opens a new
/// session, and a Prometheus counter must not fall back to 0 then).
struct MetricCounts {
    var answered = 0
    var rejected = 0
    var connections = 0
    /// By `RecoveryKind`, then port resets (a session reopened with one).
    var recoveries = InlineArray<4, Int>(repeating: 0)
    /// By `InputDrop.index`, then the driver's (not a whole packet), then the transport's.
    var droppedIn = InlineArray<7, Int>(repeating: 0)
    /// By `OutputDrop.index`.
    var droppedOut = InlineArray<3, Int>(repeating: 0)
    var usbStalls = 0
    var usbBabble = 0
    /// Peripheral: a question's write received → its answer's notification
    /// queued, and → the controller's Number of Completed Packets for it (sent).
    var answerQueued = LatencyHistogram()
    var answerSent = LatencyHistogram()
    /// The central's questions and their outcomes.
    var central = CentralCounts()

    /// The label values, space-separated in index order (MetricsFile reads them word by word):
    /// `recoveries`'s kinds; `droppedIn`'s reasons, then `droppedOut`'s.
    static let recoveryKinds: StaticString = "command_timeout hardware_error framing_loss port_reset"
    static let dropReasons: StaticString = """
        malformed_hci_event unknown_connection malformed_acl unknown_l2cap_channel malformed_att malformed_packet transport \
        command_queue_full transmit_queue_full event_queue_full
        """

    /// Every field, down to the histograms' buckets, is an Int count that adds
    /// to its own: added word by word (a field at a time was 500 bytes of code).
    mutating func add(_ other: MetricCounts) { addCounts(&self, other) }

    var recoveryTotal: Int { recoveries[0] + recoveries[1] + recoveries[2] + recoveries[3] }
    var droppedTotal: Int {
        var n = 0
        for i in 0..<7 { n += droppedIn[i] }
        for i in 0..<3 { n += droppedOut[i] }
        return n
    }
}

/// The central's questions (--metrics-file): counted where CentralLogic reports
/// each outcome; an answer's latency from the question's write to its notification.
struct CentralCounts {
    var asked = 0
    var answered = 0
    var rejected = 0
    /// No answer in time ("device offline", exit 7).
    var timedOut = 0
    /// Searches for an 8-Ball that found none (exit 6).
    var notFound = 0
    var latency = LatencyHistogram()

    /// Ints only, as MetricCounts: added word by word.
    mutating func add(_ other: CentralCounts) { addCounts(&self, other) }
}

/// Adds each Int of `other` to the same Int of `counts`: for the count
/// structures, which hold Ints (and InlineArrays of them) only, so their
/// layout is that many Ints one after the other.
@inline(__always)
func addCounts<Counts>(_ counts: inout Counts, _ other: Counts) {
    precondition(MemoryLayout<Counts>.size % MemoryLayout<Int>.stride == 0)
    withUnsafeMutableBytes(of: &counts) { mine in
        withUnsafeBytes(of: other) { addInts(mine.baseAddress!, $0.baseAddress!, count: mine.count / MemoryLayout<Int>.stride) }
    }
}

@inline(never)
func addInts(_ to: UnsafeMutableRawPointer, _ from: UnsafeRawPointer, count: Int) {
    let to = to.assumingMemoryBound(to: Int.self), from = from.assumingMemoryBound(to: Int.self)
    for i in 0..<count { to[i] += from[i] }
}

extension MetricCounts {
    /// One session's counts, read where they are kept (the role adds its own).
    init(host: borrowing Host, driverDropped: Int, framingLosses: Int, transport: Transport) {
        connections = Int(host.counts.connections)
        for i in 0..<RecoveryKind.count { recoveries[i] = Int(host.counts.recoveries[i]) }
        // Every loss the log reports (held lines too), also those during a
        // chipset's set-up, before the host has a controller to reset.
        recoveries[RecoveryKind.framingLoss.rawValue] = framingLosses
        for i in 0..<InputDrop.count { droppedIn[i] = Int(host.counts.droppedInput[i]) }
        droppedIn[5] = driverDropped
        let link = transport.counts
        droppedIn[6] = link.droppedPackets
        for i in 0..<OutputDrop.count { droppedOut[i] = Int(host.counts.droppedOutput[i]) }
        usbStalls = link.stalls
        usbBabble = link.babbledTransfers
    }

    /// The counts in one line, for `systemctl status` (sd_notify STATUS=).
    func statusLine(connected: Int) -> BuiltText {
        """
        \(connected) central(s) connected (\(connections) in all), \(answered) question(s) answered, \(rejected) rejected, \
        \(recoveryTotal) controller recoveries, \(droppedTotal) packet(s) dropped
        """
    }
}
