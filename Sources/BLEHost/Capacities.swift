/// Every fixed capacity of the core in one place: together they are its static
/// memory. Value generics take literals only, so each capacity is a type alias
/// and the counts are read back from the types.
public enum Capacity {
    /// LE links at once: the connection table and the 8-Ball's per-central state.
    public typealias PerLink<Element: ~Copyable> = InlineArray<8, Element>
    public static var links: Int { PerLink<UInt8>.count }

    /// HostEvents waiting for the platform between two drains.
    public typealias EventRing = FixedQueue<32, HostEvent>
    /// HCI commands queued behind the outstanding one.
    public typealias CommandRing = FixedQueue<12, HCIPacket>
    /// ACL that overtook its LE Connection Complete.
    public typealias EarlyACLRing = FixedQueue<2, HCIPacket>

    /// L2CAP PDUs queued for the controller, all links together.
    public typealias TransmitSlots<Element: ~Copyable> = InlineArray<16, Element>
    public static var transmitPDUs: Int { TransmitSlots<UInt8>.count }

    /// Prepare Write entries per link, and the bytes they may hold together.
    public typealias PreparedWriteSlots<Element> = InlineArray<32, Element>
    public typealias PreparedWriteBytes = FixedBytes<640>

    /// Attributes of the static GATT database, their stored values, and CCCDs.
    public typealias AttributeSlots<Element> = InlineArray<24, Element>
    public typealias AttributeValuePool = FixedBytes<512>
    public typealias CCCDSlots<Element> = InlineArray<4, Element>

    /// One question or any attribute value: ATT's maximum (Vol 3 Part F §3.2.9).
    public typealias ValueBuffer = FixedBytes<512>
}
