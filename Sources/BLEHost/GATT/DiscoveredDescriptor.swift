/// A descriptor found by discovery (Core Vol 3 Part G §4.7.1).
public struct DiscoveredDescriptor {
    public var handle: UInt16 = 0
    public var uuid = BLEUUID(uuid16: 0)
    public init() {}
}
