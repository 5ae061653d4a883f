/// A Bluetooth device address: 48 bits plus its type (Core Vol 6 Part B §1.3).
public struct BDAddress: Equatable, Sendable {
    /// The 48-bit value, most significant byte first when printed.
    public var value: UInt64
    /// 0x00 public, 0x01 random (HCI address types; 0x02/0x03 identity types are folded in).
    public var type: UInt8

    public init(value: UInt64, type: UInt8) {
        self.value = value & 0xFFFF_FFFF_FFFF
        self.type = type
    }

    public static let zero = BDAddress(value: 0, type: 0)

    public var isZero: Bool { value == 0 }

    /// A static random address has its two most significant bits set (Vol 6 Part B §1.3.2.1).
    public static func staticRandom(from seed: UInt64) -> BDAddress {
        var v = seed & 0x3FFF_FFFF_FFFF
        if v == 0 || v == 0x3FFF_FFFF_FFFF { v = 0x1234_5678_9ABC }
        return BDAddress(value: v | 0xC000_0000_0000, type: 1)
    }

    public init(reader: inout ByteReader, type: UInt8) {
        self.init(value: reader.u64(6), type: type)
    }

    public func write<let n: Int>(to buffer: inout FixedBytes<n>) {
        // One 6-byte copy, not six unrolled appends.
        withUnsafeBytes(of: value.littleEndian) { _ = buffer.append(UnsafeRawBufferPointer(rebasing: $0[0..<6])) }
    }

    /// The byte at position `i` of the printed form (0 = most significant).
    public func printedByte(_ i: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: value &>> wide(8 * (5 - i)))
    }
}
