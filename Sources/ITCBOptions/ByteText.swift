// Text compared, searched, cut and sorted as its UTF-8 bytes (docs/ARCHITECTURE.md,
// "Text is bytes"). Swift's own `==`, `<`, `hasPrefix`, `split`, `switch` over
// String literals, `init?(rawValue:)` of a String enum and Character counts treat
// canonically equivalent text as equal and step by grapheme clusters: in the
// Embedded build that links the standard library's normaliser, its grapheme
// breaking and their tables (libswiftUnicodeDataTables). Every name this program
// compares (options, transports, files, a peer's name) is compared here instead,
// byte for byte: "é" (U+00E9) and "e" + U+0301 are different names. Lives in
// ITCBOptions, the lowest module the platform's text passes through (the option
// table's help is wrapped with it), so the program and the docs tool share it.
// The longer helpers are @inline(never): one specialisation per string type
// for all their callers, not a copy in each (1.6 KB less, x86_64, 2026-11-28).

/// `a` and `b` are the same bytes.
public func sameBytes(_ a: some BytesInPlace, _ b: some BytesInPlace) -> Bool {
    withBytes(a) { x in withBytes(b) { y in compareBuffers(x, y, .same) } }
}

/// `a` and `b` as Strings: the form every caller in the program has. With
/// `hasBytePrefix` and `hasByteSuffix` one body, one pair of nested
/// `withBytes`: the generic ones were a specialisation and a closure each (2026-11-29).
public func sameBytes(_ a: String, _ b: String) -> Bool { compareBytes(a, b, .same) }

/// How `compareBytes` holds `a` to `b`.
enum ByteMatch { case same, prefix, suffix }

/// `a` is `b`'s bytes, begins with them or ends with them.
@inline(never)
func compareBytes(_ a: String, _ b: String, _ match: ByteMatch) -> Bool {
    withBytes(a) { x in withBytes(b) { y in compareBuffers(x, y, match) } }
}

/// `compareBytes` over the bytes: not inlined, as the nested `withBytes` would
/// have it four times (each text's bytes in place or, if foreign, copied).
@inline(never)
func compareBuffers(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>, _ match: ByteMatch) -> Bool {
    guard match == .same ? x.count == y.count : x.count >= y.count else { return false }
    return startsWith(UnsafeBufferPointer(rebasing: x[(match == .suffix ? x.count - y.count : 0)...]), y)
}

/// The text's UTF-8 bytes where they lie. Every String here is native UTF-8
/// (a small one's bytes are copied to the stack): only a bridged ("foreign")
/// string, which Embedded Swift and Linux never have, has none, so there is no
/// copying path. `String.withUTF8`, `Array(text.utf8)` and a Substring's
/// `withContiguousStorageIfAvailable` (a Slice's, which measures its offsets
/// through the foreign-string code) carry one, and it kept the standard
/// library's foreign-string code linked (RepairedText.swift, 2026-11-29).
/// Comparing over buffers: the stdlib's elementsEqual and starts(with:) over
/// two UTF8Views were 1.2 KB of code each (2026-11-28).
@inline(__always)
public func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    guard let result = text.utf8.withContiguousStorageIfAvailable(body) else { preconditionFailure("foreign string") }
    return result
}

/// A Substring's bytes where they lie: its UTF-8 view's span, whose offsets
/// are the String's own (no foreign-string path, as `withBytes(String)`).
@inline(__always)
public func withBytes<R>(_ text: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    text.utf8.span.withUnsafeBufferPointer(body)
}

/// String and Substring, for the byte helpers that take either: their bytes in place.
public protocol BytesInPlace: StringProtocol {
    func withBytesInPlace<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
}

extension String: BytesInPlace {
    @inline(__always)
    public func withBytesInPlace<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { withBytes(self, body) }
}

extension Substring: BytesInPlace {
    @inline(__always)
    public func withBytesInPlace<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { withBytes(self, body) }
}

@inline(__always)
public func withBytes<R>(_ text: some BytesInPlace, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    text.withBytesInPlace(body)
}

/// The text's UTF-8 bytes as an array (`Array(text.utf8)` without its copying
/// path for foreign strings: `withBytes`).
@inline(__always)
public func utf8Array(_ text: some BytesInPlace) -> [UInt8] { withBytes(text) { Array($0) } }

/// `a` begins with `b`'s bytes.
@inline(never)
public func startsWith(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count >= b.count else { return false }
    for index in 0..<b.count where a[index] != b[index] { return false }
    return true
}

/// `a` and `b` are the same bytes once A-Z are taken as a-z (only ASCII letters fold).
/// Over copies of the bytes: stepping two UTF8Views' indices in step was 1 KB
/// of code (2026-11-28); only names read at start come here.
@inline(never)
public func sameBytesIgnoringASCIICase(_ a: some BytesInPlace, _ b: some BytesInPlace) -> Bool {
    let a = utf8Array(a), b = utf8Array(b)
    guard a.count == b.count else { return false }
    for index in 0..<a.count where asciiLower(a[index]) != asciiLower(b[index]) { return false }
    return true
}

/// `a` sorts before `b` by bytes (for UTF-8 that is the order of the scalars' values).
public func bytesPrecede(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}

@inline(__always) func asciiLower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }

extension Sequence where Element: BytesInPlace {
    /// One of the elements is `text`'s bytes.
    public func containsBytes(_ text: some BytesInPlace) -> Bool { contains { sameBytes($0, text) } }
}

extension CaseIterable where Self: RawRepresentable, RawValue == String {
    /// The case whose raw value is `text`'s bytes; `init?(rawValue:)` would switch over the strings.
    public init?(bytes text: some BytesInPlace) {
        guard let found = Self.allCases.first(where: { sameBytes($0.rawValue, text) }) else { return nil }
        self = found
    }
}

extension BytesInPlace {
    /// The text begins with `prefix`'s bytes.
    public func hasBytePrefix(_ prefix: some BytesInPlace) -> Bool {
        withBytes(self) { x in withBytes(prefix) { y in compareBuffers(x, y, .prefix) } }
    }

    /// Where the first `separator` (an ASCII character, so a byte of its own) is.
    public func firstIndex(ascii separator: Unicode.Scalar) -> Index? {
        utf8.firstIndex(of: UInt8(ascii: separator))
    }

    /// The text has the ASCII character `separator`.
    public func contains(ascii separator: Unicode.Scalar) -> Bool { firstIndex(ascii: separator) != nil }

    /// The text before the first `separator`, or all of it.
    public func prefix(beforeASCII separator: Unicode.Scalar) -> SubSequence {
        self[..<(firstIndex(ascii: separator) ?? endIndex)]
    }
}

// The longer ones on Substring alone, and on String through it: generic over
// StringProtocol they were specialised twice, for String and for Substring
// (both give Substring pieces), 2026-11-28.
extension Substring {
    /// The text ends with `suffix`'s bytes (`compareBuffers`, as every byte
    /// comparison: dropFirst + elementsEqual over the views was 1.2 KB of code).
    @inline(never)
    public func hasByteSuffix(_ suffix: some BytesInPlace) -> Bool {
        withBytes(self) { x in withBytes(suffix) { y in compareBuffers(x, y, .suffix) } }
    }

    /// Where the last `separator` (an ASCII character) is.
    @inline(never)
    public func lastIndex(ascii separator: Unicode.Scalar) -> Index? {
        let byte = UInt8(ascii: separator)
        var found: Index? = nil
        var index = startIndex
        while index < endIndex {
            if utf8[index] == byte { found = index }
            index = utf8.index(after: index)
        }
        return found
    }

    /// The text before and after the first (`last`: the last) `separator`; nil without one.
    @inline(never)
    public func cut(at separator: Unicode.Scalar, last: Bool = false) -> (before: Substring, after: Substring)? {
        guard let index = last ? lastIndex(ascii: separator) : firstIndex(ascii: separator) else { return nil }
        return (self[..<index], self[utf8.index(after: index)...])
    }

    /// The pieces between the ASCII character `separator`, as `split(separator:)`
    /// makes them (at most `maxSplits` cuts; empty pieces left out unless asked).
    @inline(never)
    public func split(ascii separator: Unicode.Scalar, maxSplits: Int = Int.max,
                      omittingEmptySubsequences: Bool = true) -> [Substring] {
        let byte = UInt8(ascii: separator)
        var pieces: [Substring] = []
        var start = startIndex, index = startIndex
        func add(_ end: Index) {
            if !omittingEmptySubsequences || start < end { pieces.append(self[start..<end]) }
        }
        while index < endIndex, pieces.count < maxSplits {
            if utf8[index] == byte {
                add(index)
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        add(endIndex)
        return pieces
    }

    /// Without leading and trailing white space: ASCII's (space, \t, \n, \v, \f,
    /// \r), and other scalars only as `isSpace` says (the platform asks libc).
    @inline(never)
    public func trimmingWhiteSpace(_ isSpace: (Unicode.Scalar) -> Bool = { _ in false }) -> Substring {
        let (first, end) = withBytes(self) { whiteSpaceBounds($0, isSpace) }
        return self[utf8.index(startIndex, offsetBy: first)..<utf8.index(startIndex, offsetBy: end)]
    }
}

/// The byte offsets of the text between leading and trailing white space (as
/// `trimmingWhiteSpace` says), from..<to. Over the bytes, each scalar decoded
/// only when it is not ASCII (the UnicodeScalarView's walk was twice the
/// code, 2026-11-28).
func whiteSpaceBounds(_ bytes: UnsafeBufferPointer<UInt8>, _ isSpace: (Unicode.Scalar) -> Bool) -> (Int, Int) {
    // One pass: from the first scalar that is not space to the end of the last.
    var first = -1, end = 0, index = 0
    while index < bytes.count {
        let lead = bytes[index]
        let space: Bool
        var length = 1
        if lead < 0x80 {
            space = lead == 32 || (lead >= 9 && lead <= 13)
        } else {
            length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            var value = UInt32(lead) & (0x7F >> UInt32(length))
            for next in (index + 1)..<Swift.min(index + length, bytes.count) { value = value << 6 | UInt32(bytes[next] & 0x3F) }
            space = Unicode.Scalar(value).map(isSpace) ?? false
        }
        if !space {
            if first < 0 { first = index }
            end = Swift.min(index + length, bytes.count)
        }
        index += length
    }
    return (first < 0 ? end : first, end)
}

extension String {
    /// `trimmingWhiteSpace` as a String, made from the bytes between: no
    /// Substring indices moved by offsets (the standard library's
    /// UTF8View.index(_:offsetBy:), 2026-11-29).
    @inline(never)
    public func trimmedWhiteSpace(_ isSpace: (Unicode.Scalar) -> Bool) -> String {
        withBytes(self) { bytes in
            let (first, end) = whiteSpaceBounds(bytes, isSpace)
            return String(repairingUTF8: UnsafeBufferPointer(rebasing: bytes[first..<end]))
        }
    }
}

extension String {
    /// `hasBytePrefix` for a String prefix (`compareBytes`).
    public func hasBytePrefix(_ prefix: String) -> Bool { compareBytes(self, prefix, .prefix) }

    /// `hasByteSuffix` for a String suffix (`compareBytes`).
    public func hasByteSuffix(_ suffix: String) -> Bool { compareBytes(self, suffix, .suffix) }

    // Through Substring: the stdlib's firstIndex(of:) then exists once, for
    // Substring's UTF8View, not for String's as well.
    @inline(__always)
    public func firstIndex(ascii separator: Unicode.Scalar) -> Index? { self[...].firstIndex(ascii: separator) }

    @inline(__always)
    public func contains(ascii separator: Unicode.Scalar) -> Bool { self[...].firstIndex(ascii: separator) != nil }

    @inline(__always)
    public func prefix(beforeASCII separator: Unicode.Scalar) -> Substring { self[...].prefix(beforeASCII: separator) }

    @inline(__always)
    public func hasByteSuffix(_ suffix: some BytesInPlace) -> Bool { self[...].hasByteSuffix(suffix) }

    /// What follows `prefix`'s bytes; nil when the text does not begin with them.
    /// (On String alone: every caller has one, and Substring's was the larger.)
    @inline(never)
    public func afterBytePrefix(_ prefix: some BytesInPlace) -> Substring? {
        guard hasBytePrefix(prefix) else { return nil }
        return self[utf8.index(startIndex, offsetBy: prefix.utf8.count)...]
    }

    @inline(__always)
    public func lastIndex(ascii separator: Unicode.Scalar) -> Index? { self[...].lastIndex(ascii: separator) }

    @inline(__always)
    public func cut(at separator: Unicode.Scalar, last: Bool = false) -> (before: Substring, after: Substring)? {
        self[...].cut(at: separator, last: last)
    }

    @inline(__always)
    public func split(ascii separator: Unicode.Scalar, maxSplits: Int = Int.max,
                      omittingEmptySubsequences: Bool = true) -> [Substring] {
        self[...].split(ascii: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences)
    }

    @inline(__always)
    public func trimmingWhiteSpace(_ isSpace: (Unicode.Scalar) -> Bool = { _ in false }) -> Substring {
        self[...].trimmingWhiteSpace(isSpace)
    }
}

extension String {
    /// Every occurrence of `target`'s bytes replaced by `replacement`'s.
    public func replacingOccurrences(of target: String, with replacement: String) -> String {
        let bytes = utf8Array(self), pattern = utf8Array(target), replacementBytes = utf8Array(replacement)
        guard !pattern.isEmpty else { return self }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + pattern.count <= bytes.count, bytes[i..<(i + pattern.count)].elementsEqual(pattern) {
                out += replacementBytes
                i += pattern.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(repairingUTF8: out)
    }

    /// a-z to A-Z, every other byte as it is (no Unicode tables: Embedded Swift keeps them out).
    public func uppercasedASCII() -> String {
        var bytes = utf8Array(self)
        for index in bytes.indices where bytes[index] >= 97 && bytes[index] <= 122 { bytes[index] -= 32 }
        return String(repairingUTF8: bytes)
    }

    /// A-Z to a-z, every other byte as it is (String.lowercased() would link the
    /// Unicode case tables, about 16 KB of the shipped binary).
    /// Changed in place in one copy of the bytes: `utf8.map` was a specialisation of its own.
    public func lowercasedASCII() -> String {
        var bytes = utf8Array(self)
        for index in bytes.indices { bytes[index] = asciiLower(bytes[index]) }
        return String(repairingUTF8: bytes)
    }
}

/// A whole number read as Swift's `Int(text, radix:)` reads one (an optional
/// `+` or `-`, then one or more digits of `radix`, letters in either case, and
/// nothing else), as its sign and magnitude; nil when it is not one or its
/// magnitude passes 64 bits. One parser over bytes for every number the
/// program reads: each `Int(…)`, `UInt16(…, radix:)` … is a specialisation of
/// the standard library's generic parser of its own (about 7 KB of the shipped
/// binary in all, 2026-11-28).
/// Over the bytes in place (`withBytes`): Substring's withUTF8 linked the
/// standard library's slow path that makes a slice contiguous (2026-11-29).
@inline(never)
public func parseWhole(_ text: Substring, radix: UInt64 = 10) -> (negative: Bool, magnitude: UInt64)? {
    withBytes(text) { parseWhole(bytes: $0, radix: radix) }
}

/// `parseWhole` over bytes where they lie (a transport spec's fields).
public func parseWhole(bytes: UnsafeBufferPointer<UInt8>, radix: UInt64 = 10) -> (negative: Bool, magnitude: UInt64)? {
    var bytes = bytes[...]
    let negative = bytes.first == UInt8(ascii: "-")
    if negative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
    guard !bytes.isEmpty else { return nil }
    var value: UInt64 = 0
    for byte in bytes {
        let digit: UInt64
        switch byte {
        case 48...57: digit = UInt64(byte - 48)
        case 65...90: digit = UInt64(byte - 55)
        case 97...122: digit = UInt64(byte - 87)
        default: return nil
        }
        guard digit < radix else { return nil }
        let (times, overflow1) = value.multipliedReportingOverflow(by: radix)
        let (sum, overflow2) = times.addingReportingOverflow(digit)
        guard !overflow1, !overflow2 else { return nil }
        value = sum
    }
    return (negative, value)
}

/// A whole number as `Int(text)` reads it; nil for anything else.
@inline(never)
public func parseInteger(_ text: Substring) -> Int? { integerValue(parseWhole(text)) }

/// The same over a String's bytes (no Substring of it made: `text[...]`
/// linked String's foreign-string index checks, RepairedText.swift).
@inline(never)
public func parseInteger(_ text: String) -> Int? { integerValue(withBytes(text) { parseWhole(bytes: $0) }) }

/// A parsed whole number as an Int, nil when it does not fit.
func integerValue(_ parsed: (negative: Bool, magnitude: UInt64)?) -> Int? {
    guard let (negative, magnitude) = parsed else { return nil }
    if negative { return magnitude <= 1 << 63 ? Int(truncatingIfNeeded: 0 &- magnitude) : nil }
    return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
}

/// A whole number from 0 to `maximum` as an unsigned `UInt…(text, radix:)`
/// reads it ("-0" is 0, as there); nil for anything else.
@inline(never)
public func parseUnsigned(_ text: Substring, radix: UInt64 = 10, maximum: UInt64) -> UInt64? {
    unsignedValue(parseWhole(text, radix: radix), maximum: maximum)
}

/// A parsed whole number within 0…maximum ("-0" is 0), else nil.
public func unsignedValue(_ parsed: (negative: Bool, magnitude: UInt64)?, maximum: UInt64) -> UInt64? {
    guard let (negative, magnitude) = parsed else { return nil }
    if negative { return magnitude == 0 ? 0 : nil }
    return magnitude <= maximum ? magnitude : nil
}

// Bytes appended to a byte array take one path whatever holds them: the standard
// library's generic append(contentsOf:) is otherwise specialised once per source
// type (array, typed and raw buffer), 860 B of the same loop three times. These
// overloads win over the generic one wherever ITCBOptions is imported.
extension Array where Element == UInt8 {
    @inline(__always) public mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
    }

    @inline(__always) public mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append(contentsOf: $0) }
    }
}
