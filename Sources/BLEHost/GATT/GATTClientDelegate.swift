/// The application behind our GATT client: values the peer's server pushes,
/// handed over where they lie in the received PDU, during `Host.handlePacket`.
/// By default they are ignored (an application that subscribes to nothing).
public protocol GATTClientDelegate: ~Copyable {
    /// A Handle Value Notification (Vol 3 Part F §3.4.7.1).
    mutating func clientNotification(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer)
    /// A Handle Value Indication (§3.4.7.2); the host has already queued its confirmation.
    mutating func clientIndication(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer)
}

extension GATTClientDelegate where Self: ~Copyable {
    public mutating func clientNotification(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {}
    public mutating func clientIndication(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {}
}
