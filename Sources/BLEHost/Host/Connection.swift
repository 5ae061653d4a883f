/// One LE link and its per-link protocol state. Lives in place in the host's
/// connection table: reset, never replaced or copied.
public struct Connection: ~Copyable {
    let pin = InPlacePin()
    public var handle: UInt16 = 0
    public var inUse = false
    /// True when we are the central of this link.
    public var isCentral = false
    public var peer = BDAddress.zero
    public var reassembler = L2CAPReassembler()
    public var bearer = ATTBearer()
    /// ACL packets handed to the controller and not yet completed.
    public var inFlight = 0
    /// ACL packets (fragments) handed to the controller on this link, and those
    /// it reported completed (Number of Completed Packets), since it connected:
    /// a platform times a PDU to its completion with `Host.completionMark`.
    public internal(set) var fragmentsSent = 0
    public internal(set) var fragmentsCompleted = 0
    public var disconnecting = false
    /// When the peer last had a write accepted (subscribed, asked) or connected:
    /// the idle-link clock.
    public var lastRequest: UInt64 = 0
    /// Refused SMP packets and dropped requests, reported at most once a minute.
    var smpLine = RepeatedLine()
    var dropLine = RepeatedLine()
    var lastDrop = RequestDrop.attPipelined
    /// What the peripheral has asked of this link so far (LinkTuning.swift).
    var tuning = LinkTuning.none

    /// Out of line: the host's table of links calls it once per slot instead of unrolling it.
    @inline(never) public init() {}

    /// Back to a free slot, in place.
    mutating func reset() { self = Connection() }
}
