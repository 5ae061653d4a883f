/// AD types (Core Supplement Part A §1, Assigned Numbers).
public enum ADType {
    public static let flags: UInt8 = 0x01
    public static let incomplete16: UInt8 = 0x02
    public static let complete16: UInt8 = 0x03
    public static let incomplete32: UInt8 = 0x04
    public static let complete32: UInt8 = 0x05
    public static let incomplete128: UInt8 = 0x06
    public static let complete128: UInt8 = 0x07
    public static let shortenedLocalName: UInt8 = 0x08
    public static let completeLocalName: UInt8 = 0x09
}

/// Legacy advertising data or scan response: at most 31 bytes of AD structures
/// (Core Vol 3 Part C §11).
public struct AdvertisingData {
    public static let maxLength = 31
    public var bytes = FixedBytes<31>()

    public init() {}

    /// Flags: LE General Discoverable, BR/EDR Not Supported.
    public static let generalDiscoverableFlags: UInt8 = 0x06

    @discardableResult
    public mutating func add(type: UInt8, _ value: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= 29, bytes.freeSpace >= 2 + value.count else { return false }
        bytes.append(UInt8(1 + value.count))
        bytes.append(type)
        bytes.append(value)
        return true
    }

    @discardableResult
    public mutating func addFlags(_ flags: UInt8) -> Bool {
        guard bytes.freeSpace >= 3 else { return false }
        bytes.append(2)
        bytes.append(ADType.flags)
        bytes.append(flags)
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
        let room = bytes.freeSpace - 2
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

/// What a scanner learns from one device's advertising data and scan response.
public struct AdvertisementSummary {
    public var flags: UInt8 = 0
    public var hasFlags = false
    /// Up to 4 service UUIDs of any size (complete or incomplete lists).
    public var services: InlineArray<4, BLEUUID> = InlineArray(repeating: BLEUUID(uuid16: 0))
    public var serviceCount = 0
    public var name = FixedBytes<31>()
    public var nameIsComplete = false
    /// The data ended inside an AD structure (a length past the end).
    public var truncated = false

    public init() {}

    @_addressableSelf public func hasService(_ uuid: BLEUUID) -> Bool {
        var index = 0
        while index < serviceCount {
            if services[index] == uuid { return true }
            index += 1
        }
        return false
    }

    mutating func addService(_ uuid: BLEUUID) {
        guard serviceCount < 4, !hasService(uuid) else { return }
        services[serviceCount] = uuid
        serviceCount += 1
    }

    /// Parses AD structures (Core Vol 3 Part C §11) and merges them into this
    /// summary, so a scan response adds to the advertising data. A zero length
    /// ends the data (padding); a length past the end marks it truncated and
    /// stops; a UUID list whose length is not a multiple of the UUID size keeps
    /// the whole UUIDs only.
    public mutating func merge(_ data: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            if length == 0 { return }
            guard offset + 1 + length <= data.count else {
                truncated = true
                return
            }
            let type = data[offset + 1]
            let value = UnsafeRawBufferPointer(rebasing: data[(offset + 2)..<(offset + 1 + length)])
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
            offset += 1 + length
        }
    }

    mutating func addUUIDs(_ value: UnsafeRawBufferPointer, size: Int) {
        var offset = 0
        while offset + size <= value.count {
            if let uuid = BLEUUID(wire: UnsafeRawBufferPointer(rebasing: value[offset..<(offset + size)])) {
                addService(uuid)
            }
            offset += size
        }
    }
}
