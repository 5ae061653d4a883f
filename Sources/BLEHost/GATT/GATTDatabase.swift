/// A static GATT database: built once at start-up, never changed while running
/// (so Service Changed never has to be indicated). Handles are 1...count.
/// Non-copyable: it is stored once, in the host's ATT server.
public struct GATTDatabase: ~Copyable {
    let pin = InPlacePin()
    public static var capacity: Int { Capacity.AttributeSlots<UInt8>.count }
    public static var cccdCapacity: Int { Capacity.CCCDSlots<UInt8>.count }

    var attributes: Capacity.AttributeSlots<GATTAttribute> = InlineArray(filling: { GATTAttribute.empty })
    public private(set) var count = 0
    public private(set) var cccdCount = 0
    var pool = Capacity.AttributeValuePool()
    public init() {}

    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= 1, Int(handle) <= count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// The stored value of a static attribute.
    @discardableResult
    public func withStaticValue<R>(_ handle: UInt16, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let attribute = attributes[Int(handle) - 1]
        return pool.withBytes { all in
            body(UnsafeRawBufferPointer(rebasing: all[attribute.valueStart..<(attribute.valueStart + attribute.valueLength)]))
        }
    }

    /// The length of a static attribute's stored value.
    public func staticValueLength(_ handle: UInt16) -> Int { attributes[Int(handle) - 1].valueLength }

    /// Whether a static attribute's value equals `bytes`.
    public func staticValueEquals(_ handle: UInt16, _ bytes: UnsafeRawBufferPointer) -> Bool {
        withStaticValue(handle) { valuesEqual($0, bytes) }
    }

    /// Appends a static attribute's value to `out`; false when it does not fit.
    @discardableResult
    public func appendStaticValue<let n: Int>(_ handle: UInt16, to out: inout FixedBytes<n>) -> Bool {
        withStaticValue(handle) { out.append($0) }
    }

    mutating func add(_ attribute: GATTAttribute, value: UnsafeRawBufferPointer) -> UInt16 {
        // Full: 0, no handle (the 8-Ball's database fits by construction, see Capacity).
        guard count < GATTDatabase.capacity, pool.freeSpace >= value.count else { return 0 }
        var stored = attribute
        stored.valueStart = pool.count
        stored.valueLength = value.count
        pool.append(value)
        attributes[count] = stored
        count += 1
        // The open service's group now ends here.
        var index = count - 1
        while index >= 0 {
            if attributes[index].isServiceDeclaration {
                attributes[index].groupEnd = UInt16(count)
                break
            }
            index -= 1
        }
        return UInt16(count)
    }

    /// Adds a primary service declaration; returns its handle.
    @discardableResult
    public mutating func addPrimaryService(_ uuid: BLEUUID) -> UInt16 {
        var value = FixedBytes<16>()
        uuid.write(to: &value)
        var attribute = GATTAttribute.empty
        attribute.type = BLEUUID(uuid16: GATTType.primaryService)
        attribute.readable = true
        return value.withBytes { add(attribute, value: $0) }
    }

    /// Adds a characteristic declaration, its value attribute and, for notify or
    /// indicate, its CCCD. A `staticValue` makes the value read-only and fixed;
    /// without one the value is dynamic (GATTServerDelegate). Returns the value handle.
    @discardableResult
    public mutating func addCharacteristic(
        _ uuid: BLEUUID, properties: CharacteristicProperties, staticValue: UnsafeRawBufferPointer? = nil
    ) -> UInt16 {
        // Declaration value: properties, value handle, UUID (Vol 3 Part G §3.3.1).
        var declaration = FixedBytes<19>()
        declaration.append(properties.rawValue)
        declaration.appendUInt16(UInt16(count + 2))
        uuid.write(to: &declaration)
        var declarationAttribute = GATTAttribute.empty
        declarationAttribute.type = BLEUUID(uuid16: GATTType.characteristic)
        declarationAttribute.readable = true
        _ = declaration.withBytes { add(declarationAttribute, value: $0) }

        var valueAttribute = GATTAttribute.empty
        valueAttribute.type = uuid
        valueAttribute.properties = properties
        valueAttribute.readable = properties.contains(.read)
        valueAttribute.writable = properties.contains(.write)
        valueAttribute.writableWithoutResponse = properties.contains(.writeWithoutResponse)
        let valueHandle: UInt16
        if let staticValue {
            valueHandle = add(valueAttribute, value: staticValue)
        } else {
            valueAttribute.dynamic = true
            valueHandle = add(valueAttribute, value: UnsafeRawBufferPointer(start: nil, count: 0))
        }

        if properties.contains(.notify) || properties.contains(.indicate) {
            guard cccdCount < GATTDatabase.cccdCapacity else { return valueHandle }
            var cccd = GATTAttribute.empty
            cccd.type = BLEUUID(uuid16: GATTType.clientCharacteristicConfiguration)
            cccd.properties = properties
            cccd.readable = true
            cccd.writable = true
            cccd.writableWithoutResponse = true
            cccd.cccdIndex = cccdCount
            cccdCount += 1
            _ = add(cccd, value: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return valueHandle
    }

    /// The CCCD handle of a characteristic value handle, if it has one.
    public func cccdHandle(forValue handle: UInt16) -> UInt16? {
        guard Int(handle) < count, attributes[Int(handle)].isCCCD else { return nil }
        return handle + 1
    }

    /// The CCCD table index of a characteristic value handle.
    public func cccdIndex(forValue handle: UInt16) -> Int? {
        guard let cccd = cccdHandle(forValue: handle) else { return nil }
        return attributes[Int(cccd) - 1].cccdIndex
    }

    /// Adds the GAP (0x1800: Device Name, Appearance) and GATT (0x1801: Service
    /// Changed) services every LE server carries (Vol 3 Part C §12, Part G §7).
    /// Returns the Service Changed value handle.
    @discardableResult
    public mutating func addGAPAndGATTServices(name: UnsafeRawBufferPointer, appearance: UInt16) -> UInt16 {
        addPrimaryService(BLEUUID(uuid16: GATTType.gapService))
        addCharacteristic(BLEUUID(uuid16: GATTType.deviceName), properties: .read, staticValue: name)
        var appearanceValue = FixedBytes<2>()
        appearanceValue.appendUInt16(appearance)
        appearanceValue.withBytes {
            _ = addCharacteristic(BLEUUID(uuid16: GATTType.appearance), properties: .read, staticValue: $0)
        }
        addPrimaryService(BLEUUID(uuid16: GATTType.gattService))
        // Service Changed: indicate only; its value is not readable (Vol 3 Part G §7.1).
        var range = FixedBytes<4>()
        range.appendUInt16(0x0001)
        range.appendUInt16(0xFFFF)
        return range.withBytes {
            addCharacteristic(BLEUUID(uuid16: GATTType.serviceChanged), properties: .indicate, staticValue: $0)
        }
    }
}
