/// A byte buffer with a compile-time capacity (swift-nio's ByteBuffer without the heap).
/// Appends past the capacity fail and leave the buffer unchanged, so overflow is
/// always a decision of the caller (error response, drop, disconnect), never growth.
public struct FixedBytes<let capacity: Int> {
    @usableFromInline var storage: InlineArray<capacity, UInt8>
    public private(set) var count: Int

    public init() {
        storage = InlineArray(repeating: 0)
        count = 0
    }

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.init()
        _ = append(bytes)
    }

    public var isEmpty: Bool { count == 0 }
    public var freeSpace: Int { capacity - count }

    public subscript(index: Int) -> UInt8 {
        // Addressable: without it, a read through a borrowed buffer copies all of it.
        @_addressableSelf get { storage[index] }
        set { storage[index] = newValue }
    }

    public mutating func removeAll() { count = 0 }

    /// Shortens the buffer; a no-op when `newCount` is not smaller.
    public mutating func truncate(to newCount: Int) {
        if newCount < count { count = max(0, newCount) }
    }

    @discardableResult
    public mutating func append(_ byte: UInt8) -> Bool {
        guard count < capacity else { return false }
        storage[count] = byte
        count += 1
        return true
    }

    @discardableResult
    public mutating func appendUInt16(_ value: UInt16) -> Bool {
        guard count + 2 <= capacity else { return false }
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value &>> 8))
        return true
    }

    /// Appends with one bulk copy (memcpy), not byte by byte.
    @discardableResult
    public mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard count + bytes.count <= capacity else { return false }
        guard let source = bytes.baseAddress, bytes.count > 0 else { return true }
        let start = count
        var span = storage.mutableSpan
        span.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: start).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
        return true
    }

    @discardableResult
    public mutating func append<let other: Int>(contentsOf bytes: FixedBytes<other>) -> Bool {
        bytes.withBytes { append($0) }
    }

    /// Appends `count` zero bytes (padding of fixed-size HCI parameters).
    @discardableResult
    public mutating func appendZeros(_ zeros: Int) -> Bool {
        guard zeros >= 0, count + zeros <= capacity else { return false }
        for _ in 0..<zeros { append(0) }
        return true
    }

    /// Writes a little-endian UInt16 at an existing position (length fields written last).
    public mutating func setUInt16(_ value: UInt16, at index: Int) {
        storage[index] = UInt8(truncatingIfNeeded: value)
        storage[index + 1] = UInt8(truncatingIfNeeded: value &>> 8)
    }

    /// Gives the valid bytes to `body` as a raw buffer; the pointer must not escape.
    @discardableResult
    @_addressableSelf public func withBytes<R: ~Copyable>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.span.withUnsafeBytes { raw in
            body(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
    }

    @_addressableSelf public func equals(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count == count else { return false }
        var index = 0
        for byte in bytes {
            if storage[index] != byte { return false }
            index += 1
        }
        return true
    }

    /// Removes the first `n` bytes, moving the rest to the front.
    public mutating func removeFirst(_ n: Int) {
        let n = min(n, count)
        guard n > 0 else { return }
        let remaining = count - n
        var span = storage.mutableSpan
        span.withUnsafeMutableBytes { raw in
            if remaining > 0 { raw.baseAddress!.copyMemory(from: raw.baseAddress! + n, byteCount: remaining) }
        }
        count = remaining
    }
}

/// Little-endian field access over a received packet. Every read is bounds
/// checked by the caller through `has(_:)`, so a short packet can never trap.
public struct ByteReader {
    public let bytes: UnsafeRawBufferPointer
    public private(set) var offset: Int = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var remaining: Int { bytes.count - offset }
    @_addressableSelf public func has(_ n: Int) -> Bool { n >= 0 && remaining >= n }

    public mutating func u8() -> UInt8 {
        let value = bytes[offset]
        offset += 1
        return value
    }

    public mutating func u16() -> UInt16 {
        let value = UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) &<< 8
        offset += 2
        return value
    }

    public mutating func u24() -> UInt32 {
        let value = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) &<< 8 | UInt32(bytes[offset + 2]) &<< 16
        offset += 3
        return value
    }

    public mutating func u64(_ width: Int = 8) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width { value |= wide(bytes[offset + i]) &<< wide(8 * i) }
        offset += width
        return value
    }

    /// The next `n` bytes (caller checked `has(n)`).
    public mutating func take(_ n: Int) -> UnsafeRawBufferPointer {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
        offset += n
        return slice
    }

    /// Everything not read yet.
    public mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }
}

@inlinable
func readUInt16(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
    UInt16(bytes[at]) | UInt16(bytes[at + 1]) &<< 8
}

// Widening to UInt64 through the generic BinaryInteger initialisers allocates on
// 32-bit Embedded targets (they go through `words`); these stay on the fast path.
@inline(__always) func wide(_ x: UInt8) -> UInt64 { UInt64(_truncatingBits: UInt(x)) }
@inline(__always) func wide(_ x: UInt16) -> UInt64 { UInt64(_truncatingBits: UInt(x)) }
@inline(__always) func wide(_ x: UInt32) -> UInt64 { UInt64(_truncatingBits: UInt(x)) }
@inline(__always) func wide(_ x: Int) -> UInt64 { UInt64(_truncatingBits: UInt(bitPattern: x)) }
