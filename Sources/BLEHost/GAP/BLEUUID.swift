/// A Bluetooth UUID, 16-bit or 128-bit (Core Vol 3 Part B §2.5.1).
/// Stored as the 128-bit number; 16-bit UUIDs are those on the Bluetooth base UUID
/// 0000xxxx-0000-1000-8000-00805F9B34FB. On the wire UUIDs are little-endian.
public struct BLEUUID: Equatable, Sendable {
    public var high: UInt64
    public var low: UInt64

    static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init(uuid16: UInt16) {
        high = BLEUUID.baseHigh | wide(uuid16) &<< 32
        low = BLEUUID.baseLow
    }

    /// From the 16 little-endian wire bytes (or 2 for a 16-bit UUID); nil for other lengths.
    public init?(wire bytes: UnsafeRawBufferPointer) {
        switch bytes.count {
        case 2:
            self.init(uuid16: readUInt16(bytes, 0))
        case 4:
            let value = UInt32(readUInt16(bytes, 0)) | UInt32(readUInt16(bytes, 2)) &<< 16
            self.init(high: BLEUUID.baseHigh | wide(value) &<< 32, low: BLEUUID.baseLow)
        case 16:
            var low: UInt64 = 0
            var high: UInt64 = 0
            for i in 0..<8 { low |= wide(bytes[i]) &<< wide(8 * i) }
            for i in 0..<8 { high |= wide(bytes[8 + i]) &<< wide(8 * i) }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// The 16-bit alias when this UUID is on the base UUID.
    public var uuid16: UInt16? {
        guard low == BLEUUID.baseLow, high & 0xFFFF_0000_FFFF_FFFF == BLEUUID.baseHigh else { return nil }
        return UInt16(truncatingIfNeeded: high &>> 32)
    }

    /// Wire size in ATT: 2 for 16-bit UUIDs, 16 otherwise.
    public var wireSize: Int { uuid16 == nil ? 16 : 2 }

    @discardableResult
    public func write<let n: Int>(to buffer: inout FixedBytes<n>) -> Bool {
        if let short = uuid16 { return buffer.appendUInt16(short) }
        return write128(to: &buffer)
    }

    /// Always the 16-byte form (advertising data 128-bit lists).
    @discardableResult
    public func write128<let n: Int>(to buffer: inout FixedBytes<n>) -> Bool {
        guard buffer.freeSpace >= 16 else { return false }
        // One 16-byte copy: 16 single-byte appends unrolled to ~500 B per buffer size.
        let wire = (low.littleEndian, high.littleEndian)
        return withUnsafeBytes(of: wire) { buffer.append($0) }
    }

    /// Compares against an ATT wire value (2 or 16 bytes).
    public func matches(wire bytes: UnsafeRawBufferPointer) -> Bool {
        guard let other = BLEUUID(wire: bytes) else { return false }
        return other == self
    }
}
