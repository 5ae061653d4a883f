/// Legacy advertising data or scan response: at most 31 bytes of AD structures
/// (Core Vol 3 Part C §11).
public struct AdvertisingData {
    public static let maxLength = 31
    public var payload = Capacity.AdvertisingPayload()

    public init() {}

    /// Flags: LE General Discoverable, BR/EDR Not Supported.
    public static let generalDiscoverableFlags: UInt8 = 0x06

    @discardableResult
    public mutating func add(type: UInt8, _ value: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= 29, payload.freeSpace >= 2 + value.count else { return false }
        payload.append(UInt8(1 + value.count))
        payload.append(type)
        payload.append(value)
        return true
    }

    @discardableResult
    public mutating func addFlags(_ flags: UInt8) -> Bool {
        guard payload.freeSpace >= 3 else { return false }
        payload.append(2)
        payload.append(ADType.flags)
        payload.append(flags)
        return true
    }

    @discardableResult
    public mutating func addComplete128BitServiceUUID(_ uuid: BLEUUID) -> Bool {
        var value = FixedBytes<16>()
        uuid.write128(to: &value)
        return value.withBytes { add(type: ADType.complete128, $0) }
    }

    /// Adds the local name: complete when it fits in what is left, otherwise the
    /// longest UTF-8-whole prefix as a shortened name (Supplement Part A §1.2).
    @discardableResult
    public mutating func addLocalName(_ name: UnsafeRawBufferPointer) -> Bool {
        let room = payload.freeSpace - 2
        guard room > 0, !name.isEmpty else { return false }
        if name.count <= room { return add(type: ADType.completeLocalName, name) }
        var cut = room
        // Do not split a UTF-8 sequence: back up over continuation bytes.
        while cut > 0, name[cut] & 0xC0 == 0x80 { cut -= 1 }
        guard cut > 0 else { return false }
        return add(type: ADType.shortenedLocalName, UnsafeRawBufferPointer(rebasing: name[0..<cut]))
    }

    /// The 8-Ball's advertising data and scan response (docs/ARCHITECTURE.md,
    /// "The 8-Ball on the air"): flags, the complete 128-bit service UUID list
    /// and the name (complete if it fits, else shortened); the scan response
    /// carries the complete name (shortened past 29 bytes).
    public static func advertisement(service: BLEUUID, name: UnsafeRawBufferPointer) -> (AdvertisingData, AdvertisingData) {
        var data = AdvertisingData()
        data.addFlags(generalDiscoverableFlags)
        data.addComplete128BitServiceUUID(service)
        data.addLocalName(name)
        var scanResponse = AdvertisingData()
        scanResponse.addLocalName(name)
        return (data, scanResponse)
    }
}
