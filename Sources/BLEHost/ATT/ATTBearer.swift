/// Per-connection ATT server state.
public struct ATTBearer: ~Copyable {
    let pin = InPlacePin()
    public var mtu: UInt16 = ATT.defaultMTU
    /// The client's Exchange MTU was taken: the MTU is set once per connection.
    public var mtuExchanged = false
    public var cccd: Capacity.CCCDSlots<UInt16> = InlineArray(repeating: 0)
    public var prepareQueue = PrepareWriteQueue()
    /// An indication waits for its confirmation (one at a time, Vol 3 Part F §3.4.7.2).
    public var indicationPending = false

    public init() {}
}
