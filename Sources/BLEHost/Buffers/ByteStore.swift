/// A byte buffer that stays where it was made: `FixedBytes` behind an
/// `InPlacePin`, so it cannot be copied and is always read through its
/// address. A `FixedBytes` field is plain data that the compiler loads whole
/// before a non-mutating read (Swift 6.3.1: 1 KB of stack for a borrowed
/// reassembly buffer); a `ByteStore` field is reached by address, so
/// `withBytes` reads the bytes where they lie whether its holder is borrowed
/// or held mutably. Writes are spelled as on `FixedBytes` (`append`,
/// `removeAll`, …) and happen in place; a builder that fills a `FixedBytes`
/// is handed `&store.contents`.
public struct ByteStore<let capacity: Int>: ~Copyable {
    let pin = InPlacePin()
    /// The buffer itself, for a builder that takes `inout FixedBytes`.
    public var contents = FixedBytes<capacity>()

    @inlinable public init() {}

    /// How many bytes fit.
    @inlinable public static var capacityCount: Int { capacity }

    @inlinable public var count: Int { contents.length }
    @inlinable public var isEmpty: Bool { contents.length == 0 }
    @inlinable public var freeSpace: Int { capacity - contents.length }
    @inlinable public subscript(index: Int) -> UInt8 { contents.storage[index] }

    /// Gives the valid bytes to `body` where they lie; the pointer must not escape.
    @discardableResult
    @inlinable @inline(__always) public func withBytes<R: ~Copyable>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        let count = contents.length
        return contents.storage.span.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[0..<count])) }
    }

    // The writes of `FixedBytes`, in place.
    @inlinable public mutating func removeAll() { contents.removeAll() }
    @inlinable public mutating func truncate(to newCount: Int) { contents.truncate(to: newCount) }
    @inlinable public mutating func removeFirst(_ n: Int) { contents.removeFirst(n) }
    @discardableResult
    @inlinable public mutating func append(_ byte: UInt8) -> Bool { contents.append(byte) }
    @discardableResult
    @inlinable public mutating func appendUInt16(_ value: UInt16) -> Bool { contents.appendUInt16(value) }
    @discardableResult
    @inlinable public mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool { contents.append(bytes) }
}
