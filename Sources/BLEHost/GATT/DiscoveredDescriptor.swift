/// A descriptor found by discovery (Core Vol 3 Part G §4.7.1).
public struct DiscoveredDescriptor {
    public var handle: UInt16 = 0
    /// All-zero bits until discovery sets it: the client links' slots of these start as zeroed memory.
    public var uuid = BLEUUID(high: 0, low: 0)
    public init() {}
}
