/// A byte buffer that stays where it was made: `FixedBytes` behind an
/// `InPlacePin`, so it cannot be copied and is always read through its
/// address. A `FixedBytes` field is plain data that the compiler loads whole
/// before a non-mutating read (Swift 6.3.1: 1 KB of stack for a borrowed
/// reassembly buffer); a `ByteStore` field is reached by address, so
/// `withBytes` reads the bytes where they lie whether its holder is borrowed
/// or held mutably. Writes go through `bytes`, in place (`inout`).
public struct ByteStore<let capacity: Int>: ~Copyable {
    let pin = InPlacePin()
    /// The buffer, for writing in place (`append`, `removeAll`, `&store.bytes`).
    public var bytes = FixedBytes<capacity>()

    @inlinable public init() {}

    /// How many bytes fit.
    @inlinable public static var capacityCount: Int { capacity }

    @inlinable public var count: Int { bytes.length }
    @inlinable public var isEmpty: Bool { bytes.length == 0 }
    @inlinable public subscript(index: Int) -> UInt8 { bytes.storage[index] }

    /// Gives the valid bytes to `body` where they lie; the pointer must not escape.
    @discardableResult
    @inlinable @inline(__always) public func withBytes<R: ~Copyable>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        let count = bytes.length
        return bytes.storage.span.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[0..<count])) }
    }
}
