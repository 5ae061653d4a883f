/// What a scanner learns from one device's advertising data and scan response.
public struct AdvertisementSummary {
    public var flags: UInt8 = 0
    public var hasFlags = false
    /// Up to 4 service UUIDs of any size (complete or incomplete lists); the
    /// slots past `serviceCount` are all-zero bits, so a summary (and a scan
    /// table of them) starts as zeroed memory, not a store per field.
    public var services: Capacity.AdvertisedServices<BLEUUID> = InlineArray(repeating: BLEUUID(high: 0, low: 0))
    public var serviceCount = 0
    public var name = Capacity.AdvertisingPayload()
    public var nameIsComplete = false
    /// The data ended inside an AD structure (a length past the end).
    public var truncated = false

    public init() {}

    @_addressableSelf public func hasService(_ uuid: BLEUUID) -> Bool {
        var index = 0
        while index < serviceCount {
            if services[index] == uuid { return true }
            index &+= 1
        }
        return false
    }

    mutating func addService(_ uuid: BLEUUID) {
        guard serviceCount < 4, !hasService(uuid) else { return }
        services[serviceCount] = uuid
        serviceCount &+= 1  // < 4
    }

    /// Parses AD structures (Core Vol 3 Part C §11) and merges them into this
    /// summary, so a scan response adds to the advertising data. A zero length
    /// ends the data (padding); a length past the end marks it truncated and
    /// stops; a UUID list whose length is not a multiple of the UUID size keeps
    /// the whole UUIDs only.
    public mutating func merge(_ data: UnsafeRawBufferPointer) {
        // Offsets and lengths are within the data (a length is one byte): sums wrap, never overflow.
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            if length == 0 { return }
            guard offset &+ 1 &+ length <= data.count else {
                truncated = true
                return
            }
            let type = data[offset &+ 1]
            let value = UnsafeRawBufferPointer(rebasing: data[(offset &+ 2)..<(offset &+ 1 &+ length)])
            switch type {
            case ADType.flags:
                if let first = value.first {
                    flags = first
                    hasFlags = true
                }
            case ADType.incomplete16, ADType.complete16: addUUIDs(value, size: 2)
            case ADType.incomplete32, ADType.complete32: addUUIDs(value, size: 4)
            case ADType.incomplete128, ADType.complete128: addUUIDs(value, size: 16)
            case ADType.completeLocalName, ADType.shortenedLocalName:
                // A complete name wins over a shortened one from the other packet,
                // and a longer shortened one over a shorter (the scan response's 29
                // bytes over the advertising data's 8, whichever is heard last).
                let complete = type == ADType.completeLocalName
                if !value.isEmpty, complete || name.isEmpty || (!nameIsComplete && value.count >= name.count) {
                    name.removeAll()
                    name.append(UnsafeRawBufferPointer(rebasing: value[0..<min(value.count, 31)]))
                    nameIsComplete = complete
                }
            default:
                break
            }
            offset &+= 1 &+ length
        }
    }

    mutating func addUUIDs(_ value: UnsafeRawBufferPointer, size: Int) {
        var offset = 0
        while offset &+ size <= value.count {
            if let uuid = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: value[offset..<(offset &+ size)])) {
                addService(uuid)
            }
            offset &+= size
        }
    }
}
