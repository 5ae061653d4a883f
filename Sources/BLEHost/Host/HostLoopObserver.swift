/// What the board hears from the driver: every host event (to log it, tell
/// systemd, …) and every packet received (btsnoop, trace). Nothing here may
/// change what the driver does.
public protocol HostLoopObserver: ~Copyable {
    mutating func observe(_ event: HostEvent, host: borrowing Host)
    mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer)
    /// The H4 byte stream lost its framing; the controller is being reset.
    mutating func framingLost(_ why: FramingLoss)
}

extension HostLoopObserver where Self: ~Copyable {
    public mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer) {}
    public mutating func framingLost(_ why: FramingLoss) {}
}
