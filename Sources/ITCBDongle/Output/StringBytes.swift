extension String {
    /// The UTF-8 bytes where they lie. Every String of an Embedded Swift
    /// program is native or a literal (none is bridged, "foreign"), so they
    /// are contiguous: not `withUTF8`, whose copy of a foreign String keeps
    /// about 1.8 KB of the stdlib's index code; that case traps here.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let result = utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) else {
            preconditionFailure()
        }
        return result
    }
}

extension Substring {
    /// As `String.withBytes`.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let result = utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) else {
            preconditionFailure()
        }
        return result
    }
}
