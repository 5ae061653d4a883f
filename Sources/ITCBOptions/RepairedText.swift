// Text made from bytes, as `String(decoding:as: UTF8.self)` and `String(cString:)`
// make it: each ill-formed sequence becomes U+FFFD, one per maximal subpart
// (Unicode 15, §3.9, "U+FFFD Substitution of Maximal Subparts"). The standard
// library's own repair grows its result through the code that also serves
// bridged ("foreign") strings, which Embedded Swift never has; with it and
// String's other foreign-string paths (String.withUTF8's copy, Array(text.utf8))
// out of the program, about 4 KB of that code leaves the shipped binary
// (2026-11-29). RepairedTextTests holds the two to the same bytes.

extension String {
    /// The bytes as text, each ill-formed sequence replaced by U+FFFD.
    /// (Over typed bytes: String(validating:) over raw ones was 1.3 KB more.)
    @inline(never)
    public init(repairingUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        if let text = String(validating: bytes, as: UTF8.self) {
            self = text
            return
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let length = utf8Sequence(bytes, at: index)
            if length > 0 {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index ..< index + length]))
            } else {
                out.append(0xEF)  // U+FFFD
                out.append(0xBF)
                out.append(0xBD)
            }
            index += abs(length)
        }
        self = out.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) } ?? ""
    }

    @inline(__always)
    public init(repairingUTF8 bytes: UnsafeRawBufferPointer) { self.init(repairingUTF8: bytes.assumingMemoryBound(to: UInt8.self)) }

    @inline(__always)
    public init(repairingUTF8 bytes: [UInt8]) { self = bytes.withUnsafeBufferPointer { String(repairingUTF8: $0) } }

    @inline(__always)
    public init(repairingUTF8 bytes: ArraySlice<UInt8>) { self = bytes.withUnsafeBufferPointer { String(repairingUTF8: $0) } }

    /// A C string's text (`String(cString:)`).
    @inline(never)
    public init(repairingCString pointer: UnsafePointer<CChar>) {
        var count = 0
        while pointer[count] != 0 { count += 1 }
        self.init(repairingUTF8: UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// The length of the well-formed sequence starting at `index` (Unicode §3.9,
/// Table 3-7); when it is not one, minus the length of its maximal subpart
/// (at least 1 byte), which one U+FFFD replaces. UntrustedText's escapes walk
/// text with it too.
public func utf8Sequence(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
    let lead = bytes[index]
    var low: UInt8 = 0x80, high: UInt8 = 0xBF
    let count: Int
    switch lead {
    case 0x00 ... 0x7F: return 1
    case 0xC2 ... 0xDF: count = 2
    case 0xE0: count = 3; low = 0xA0
    case 0xED: count = 3; high = 0x9F
    case 0xE1 ... 0xEF: count = 3
    case 0xF0: count = 4; low = 0x90
    case 0xF4: count = 4; high = 0x8F
    case 0xF1 ... 0xF3: count = 4
    default: return -1
    }
    for offset in 1 ..< count {
        guard index + offset < bytes.count, bytes[index + offset] >= low, bytes[index + offset] <= high else {
            return -offset
        }
        low = 0x80
        high = 0xBF
    }
    return count
}
