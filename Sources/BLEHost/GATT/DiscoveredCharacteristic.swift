/// A characteristic found by discovery (Core Vol 3 Part G §4.6).
public struct DiscoveredCharacteristic {
    public var declarationHandle: UInt16 = 0
    public var properties = CharacteristicProperties(rawValue: 0)
    public var valueHandle: UInt16 = 0
    /// All-zero bits until discovery sets it: the client links' slots of these start as zeroed memory.
    public var uuid = BLEUUID(high: 0, low: 0)
    public init() {}
}
