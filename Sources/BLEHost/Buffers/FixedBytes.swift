/// A byte buffer with a compile-time capacity (swift-nio's ByteBuffer without the heap).
/// Appends past the capacity fail and leave the buffer unchanged, so overflow is
/// always a decision of the caller (error response, drop, disconnect), never growth.
public struct FixedBytes<let capacity: Int> {
    @usableFromInline var storage: InlineArray<capacity, UInt8>
    @usableFromInline var length: Int
    @inlinable public var count: Int { length }

    @inlinable public init() {
        storage = InlineArray(repeating: 0)
        length = 0
    }

    @inlinable public init(_ bytes: UnsafeRawBufferPointer) {
        self.init()
        _ = append(bytes)
    }

    @inlinable public var isEmpty: Bool { length == 0 }
    @inlinable public var freeSpace: Int { capacity - length }
    /// How many bytes fit.
    @inlinable public static var capacityCount: Int { capacity }

    @inlinable public subscript(index: Int) -> UInt8 {
        @_addressableSelf get { storage[index] }
        set { storage[index] = newValue }
    }

    @inlinable public mutating func removeAll() { length = 0 }

    /// Shortens the buffer; a no-op when `newCount` is not smaller.
    @inlinable public mutating func truncate(to newCount: Int) {
        if newCount < length { length = max(0, newCount) }
    }

    // The appends below are inlined at hundreds of sites: their one guard
    // proves the index in range (0 ≤ length < capacity, as unsigned), so the
    // store and the count skip the checks a plain subscript and `+` repeat.
    @discardableResult
    @inlinable public mutating func append(_ byte: UInt8) -> Bool {
        guard UInt(bitPattern: length) < UInt(bitPattern: capacity) else { return false }
        unsafe storage[unchecked: length] = byte
        length &+= 1  // < capacity: no overflow
        return true
    }

    @discardableResult
    @inlinable public mutating func appendUInt16(_ value: UInt16) -> Bool {
        // 0 ≤ length ≤ capacity - 2 (capacity - 1 is a constant: no overflow for any capacity ≥ 1).
        guard length >= 0, length < capacity - 1 else { return false }
        unsafe storage[unchecked: length] = UInt8(truncatingIfNeeded: value)
        unsafe storage[unchecked: length &+ 1] = UInt8(truncatingIfNeeded: value &>> 8)
        length &+= 2
        return true
    }

    /// Appends with one bulk copy (memcpy), not byte by byte.
    @discardableResult
    @inlinable public mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Both counts are sizes in memory (0 ≤ length ≤ capacity): the sums cannot overflow.
        guard length &+ bytes.count <= capacity else { return false }
        guard let source = bytes.baseAddress, bytes.count > 0 else { return true }
        let start = length
        var span = storage.mutableSpan
        span.withUnsafeMutableBytes {
            unsafe $0.baseAddress.unsafelyUnwrapped.advanced(by: start).copyMemory(from: source, byteCount: bytes.count)
        }
        length &+= bytes.count
        return true
    }

    @discardableResult
    @inlinable public mutating func append<let other: Int>(contentsOf bytes: FixedBytes<other>) -> Bool {
        bytes.withBytes { append($0) }
    }

    /// Appends `zeros` zero bytes (padding of fixed-size HCI parameters).
    @discardableResult
    @inlinable public mutating func appendZeros(_ zeros: Int) -> Bool {
        guard zeros >= 0, length &+ zeros <= capacity else { return false }
        for _ in 0..<zeros { append(0) }
        return true
    }

    /// Gives the valid bytes to `body` as a raw buffer; the pointer must not escape.
    /// Always inlined: a specialised copy of it (Embedded, -Osize) took `self`
    /// by value and copied all `capacity` bytes before handing them out. A
    /// `FixedBytes` stored in another value may still be loaded whole first:
    /// buffers read where they lie are `ByteStore`s.
    @discardableResult
    @inlinable @inline(__always) @_addressableSelf public func withBytes<R: ~Copyable>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.span.withUnsafeBytes { raw in
            body(UnsafeRawBufferPointer(rebasing: raw[0..<length]))
        }
    }

    @inlinable public func equals(_ bytes: UnsafeRawBufferPointer) -> Bool {
        withBytes { mine in
            guard mine.count == bytes.count else { return false }
            for i in 0..<mine.count where mine[i] != bytes[i] { return false }
            return true
        }
    }

    /// Removes the first `n` bytes, moving the rest to the front.
    @inlinable public mutating func removeFirst(_ n: Int) {
        let n = min(n, length)
        guard n > 0 else { return }
        let remaining = length - n
        var span = storage.mutableSpan
        span.withUnsafeMutableBytes { raw in
            if remaining > 0 { raw.baseAddress!.copyMemory(from: raw.baseAddress! + n, byteCount: remaining) }
        }
        length = remaining
    }
}

/// The byte at `at`, which the caller checked is below `bytes.count` (so the
/// base is not nil): the subscript's nil-base trap, at every inlined read, is not needed.
@usableFromInline @inline(__always)
func byteAt(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt8 {
    unsafe bytes.baseAddress.unsafelyUnwrapped.load(fromByteOffset: at, as: UInt8.self)
}

/// Callers checked the length (`at + 1 < bytes.count`): no nil base, no overflow.
@inlinable
func readUInt16(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
    UInt16(byteAt(bytes, at)) | UInt16(byteAt(bytes, at &+ 1)) &<< 8
}

// Widening to UInt64 through the generic BinaryInteger initialisers allocates on
// 32-bit Embedded targets (they go through `words`); these stay on the fast path.
@inline(__always) func wide(_ x: UInt8) -> UInt64 { UInt64(_truncatingBits: UInt(x)) }
@inline(__always) func wide(_ x: UInt16) -> UInt64 { UInt64(_truncatingBits: UInt(x)) }
@inline(__always) func wide(_ x: UInt32) -> UInt64 { UInt64(_truncatingBits: UInt(x)) }
@inline(__always) func wide(_ x: Int) -> UInt64 { UInt64(_truncatingBits: UInt(bitPattern: x)) }
