/// Little-endian field access over a received packet. Every read is bounds
/// checked by the caller through `has(_:)`, so a short packet can never trap;
/// the reads themselves check nothing (no nil base, no overflow: offsets stay
/// within the packet), as they are inlined at every field of every event.
public struct ByteReader {
    public let bytes: UnsafeRawBufferPointer
    public private(set) var offset: Int = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var remaining: Int { bytes.count &- offset }
    public func has(_ n: Int) -> Bool { n >= 0 && remaining >= n }

    public mutating func u8() -> UInt8 {
        let value = byteAt(bytes, offset)
        offset &+= 1
        return value
    }

    public mutating func u16() -> UInt16 {
        let value = UInt16(byteAt(bytes, offset)) | UInt16(byteAt(bytes, offset &+ 1)) &<< 8
        offset &+= 2
        return value
    }

    public mutating func u64(_ width: Int = 8) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width { value |= wide(byteAt(bytes, offset &+ i)) &<< wide(8 &* i) }
        offset &+= width
        return value
    }

    /// The next `n` bytes (caller checked `has(n)`).
    public mutating func take(_ n: Int) -> UnsafeRawBufferPointer {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset &+ n)])
        offset &+= n
        return slice
    }

    /// Everything not read yet.
    public mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }
}
