/// A raw configuration descriptor as the device sends it (USB 2.0 §9.6.3–9.6.6:
/// the configuration, then interface, endpoint and class descriptors, each
/// `bLength, bDescriptorType, …`, wTotalLength bytes in all), walked without
/// libusb's parsed structs, so the walk is sans-IO, unit-tested on real
/// devices' bytes and fuzzed. The first interrupt IN, bulk IN and bulk OUT
/// endpoints of interface 0, alternate setting 0, are the controller's.
public enum USBConfigurationDescriptor {
    public static let configurationType: UInt8 = 2
    public static let interfaceType: UInt8 = 4
    public static let endpointType: UInt8 = 5

    /// Linux's copy of a device's descriptors, as it read them at enumeration
    /// (sysfs `descriptors`: the device descriptor, USB 2.0 §9.6.1, then each
    /// configuration's as the device sent it): the first configuration's endpoints.
    public static func endpoints(deviceDescriptors raw: UnsafeRawBufferPointer) throws(USBDescriptorError) -> USBEndpoints {
        let device = raw.count >= 18 && raw[0] == 18 && raw[1] == 1 ? 18 : 0
        return try endpoints(UnsafeRawBufferPointer(rebasing: raw[device...]))
    }

    public static func endpoints(_ raw: UnsafeRawBufferPointer) throws(USBDescriptorError) -> USBEndpoints {
        guard raw.count >= 9, raw[0] >= 9, raw[1] == configurationType else { throw .notAConfiguration }
        let total = Int(raw[2]) | Int(raw[3]) << 8
        guard total <= raw.count, total >= Int(raw[0]) else { throw .truncated(totalLength: total, read: raw.count) }
        var found = USBEndpoints()
        var hasEvent = false, hasIn = false, hasOut = false
        var inInterfaceZero = false, sawInterfaceZero = false
        var at = Int(raw[0])
        while at < total {
            guard total - at >= 2 else { throw .badDescriptor(offset: at) }
            let length = Int(raw[at])
            guard length >= 2, length <= total - at else { throw .badDescriptor(offset: at) }
            switch raw[at + 1] {
            case interfaceType:
                guard length >= 9 else { throw .shortDescriptor(offset: at) }
                inInterfaceZero = raw[at + 2] == 0 && raw[at + 3] == 0
                if inInterfaceZero { sawInterfaceZero = true }
            case endpointType where inInterfaceZero:
                guard length >= 7 else { throw .shortDescriptor(offset: at) }
                let address = raw[at + 2], attributes = raw[at + 3]
                let size = max(8, (Int(raw[at + 4]) | Int(raw[at + 5]) << 8) & 0x7FF)
                let isIn = address & 0x80 != 0
                switch (attributes & 0x03, isIn) {
                case (0x03, true) where !hasEvent:
                    (found.event, found.eventMaxPacket, hasEvent) = (address, size, true)
                case (0x02, true) where !hasIn:
                    (found.aclIn, found.aclInMaxPacket, hasIn) = (address, size, true)
                case (0x02, false) where !hasOut:
                    (found.aclOut, found.aclOutMaxPacket, hasOut) = (address, size, true)
                default:
                    break
                }
            default:
                break  // class-specific, interface association, other endpoints: skipped by bLength
            }
            at += length
        }
        guard sawInterfaceZero else { throw .noInterfaceZero }
        guard hasEvent, hasIn, hasOut else { throw .missingEndpoints(interruptIn: hasEvent, bulkIn: hasIn, bulkOut: hasOut) }
        return found
    }
}
