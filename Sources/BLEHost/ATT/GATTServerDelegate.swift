/// The application behind our server's dynamic attributes. Calls are
/// synchronous: the ATT response is built from what the delegate returns.
/// Return 0 for success or an ATT error code (ATTError). By default there are
/// no dynamic attributes: reads and writes are refused.
public protocol GATTServerDelegate: ~Copyable {
    /// A peer reads a dynamic attribute of ours.
    mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout Capacity.AttributeValue) -> UInt8
    /// A peer writes a dynamic attribute of ours (whole: long writes are assembled first).
    mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8
    /// A peer wrote the CCCD of characteristic value `attribute`.
    mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16)
}

extension GATTServerDelegate where Self: ~Copyable {
    public mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout Capacity.AttributeValue) -> UInt8 {
        ATTError.readNotPermitted
    }
    public mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        ATTError.writeNotPermitted
    }
    public mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16) {}
}
