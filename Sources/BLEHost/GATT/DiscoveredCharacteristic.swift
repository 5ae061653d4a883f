/// A characteristic found by discovery (Core Vol 3 Part G §4.6).
public struct DiscoveredCharacteristic {
    public var declarationHandle: UInt16 = 0
    public var properties = CharacteristicProperties(rawValue: 0)
    public var valueHandle: UInt16 = 0
    public var uuid = BLEUUID(uuid16: 0)
    public init() {}
}
