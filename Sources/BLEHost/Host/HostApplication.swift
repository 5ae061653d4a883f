/// What runs on top of the host: the 8-Ball peripheral, the asker, the
/// controller report. The driver hands each packet to the host, which calls
/// the application back as its GATT side (`GATTDelegate`: the server's dynamic
/// attributes, the notifications its client is sent). One that serves nothing
/// keeps the defaults, which answer every request with the spec's error.
public protocol HostApplication: GATTDelegate, ~Copyable {
    /// An event the host emitted (after the board saw it).
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64)
    /// Work after every input: send due notifications, the next step of a session.
    mutating func poll(host: inout Host, now: UInt64)
    /// The application's own next timer.
    func nextDeadline() -> UInt64?
    /// Something to send that found no room (a notification): the driver
    /// polls again as soon as the transmit queue frees a slot.
    var isWaitingForRoom: Bool { get }
    /// Done by itself (the asker asked everything): the driver stops the host.
    var isFinished: Bool { get }
}

extension HostApplication where Self: ~Copyable {
    public func nextDeadline() -> UInt64? { nil }
    public var isWaitingForRoom: Bool { false }
    public var isFinished: Bool { false }
}
