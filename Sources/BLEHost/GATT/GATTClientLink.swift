/// The GATT client of one link: the outstanding request, the procedure's
/// progress and the discovery results, all fixed size. Reset in place.
public struct GATTClientLink: ~Copyable {
    let pin = InPlacePin()
    var procedure = GATTProcedure.idle
    var requestOpcode: UInt8 = 0
    public internal(set) var deadline: UInt64? = nil

    // Discovery.
    var serviceUUID = BLEUUID(uuid16: 0)
    var rangeEnd: UInt16 = 0
    public internal(set) var characteristics: Capacity.DiscoveredCharacteristicSlots =
        InlineArray(filling: { DiscoveredCharacteristic() })
    public internal(set) var characteristicCount = 0
    public internal(set) var descriptors: Capacity.DiscoveredDescriptorSlots =
        InlineArray(filling: { DiscoveredDescriptor() })
    public internal(set) var descriptorCount = 0

    // Writes and reads.
    var attribute: UInt16 = 0
    var value = Capacity.AttributeValueStore()
    var offset = 0
    var chunk = 0
    public internal(set) var readValue = Capacity.AttributeValue()
    /// The error a cancelled long write reports once the server's queue is cleared.
    var cancelRequest: UInt8 = 0
    var cancelCode: UInt8 = 0

    /// Out of line: the client's table of links calls it once per slot instead of unrolling it.
    @inline(never) public init() {}

    @inline(never) mutating func reset() { self = GATTClientLink() }

    public var isBusy: Bool { procedure != .idle }

    /// A discovered characteristic by UUID.
    public func characteristic(_ uuid: BLEUUID) -> DiscoveredCharacteristic? {
        for i in 0..<characteristicCount where characteristics[i].uuid == uuid { return characteristics[i] }
        return nil
    }

    /// The first descriptor of a type after a value handle (e.g. its CCCD).
    public func descriptor(_ uuid: BLEUUID, after valueHandle: UInt16) -> DiscoveredDescriptor? {
        for i in 0..<descriptorCount where descriptors[i].uuid == uuid && descriptors[i].handle > valueHandle {
            return descriptors[i]
        }
        return nil
    }

    /// The response opcode the outstanding request expects (besides Error Response).
    func awaits(_ opcode: UInt8) -> Bool { procedure != .idle && opcode == requestOpcode &+ 1 }
}
