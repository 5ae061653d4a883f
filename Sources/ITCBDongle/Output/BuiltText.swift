import BLEHost

/// Text from a string literal with interpolations, built by outlined appends:
/// `Log.error("no answer from \(name) within \(seconds) s")`, or
/// `built("...")` where a String is wanted.
///
/// A literal with interpolations typed as String makes Embedded Swift inline
/// DefaultStringInterpolation at every use (its capacity estimate, each
/// literal piece made a String, each value's description appended): about
/// 60 bytes of code per piece. Typed as BuiltText, each piece is one call
/// with a StaticString or the value, and the bytes are appended by the few
/// functions below, once in the binary. The text is the same as
/// DefaultStringInterpolation's: integers in decimal (a minus sign for
/// negatives), anything else by its `description`.
struct BuiltText: ExpressibleByStringInterpolation {
    var bytes: [UInt8]

    @inline(__always)
    init(stringLiteral literal: StaticString) { self.init(terminated: literal.utf8Start) }

    /// A literal's bytes up to its NUL: Swift lays string literals out
    /// NUL-terminated, so each use passes one pointer, not StaticString's
    /// three words (no message literal holds a NUL).
    @inline(never)
    init(terminated start: UnsafePointer<UInt8>) {
        bytes = []
        bytes.appendTerminated(start)
    }

    init(stringInterpolation: Builder) { bytes = stringInterpolation.bytes }

    var string: String {
        @inline(never) get { String(decoding: bytes, as: UTF8.self) }
    }

    /// Text with interpolations, appended (a plain literal takes the
    /// StaticString overload below, which Swift prefers to this one).
    @_disfavoredOverload @inline(never)
    mutating func append(_ more: consuming BuiltText) { bytes.append(contentsOf: more.bytes) }

    /// A plain literal's bytes, appended: one call at each use, no BuiltText
    /// made and released.
    @inline(__always)
    mutating func append(_ literal: StaticString) { bytes.appendTerminated(literal.utf8Start) }

    /// `count` spaces (none when it is not positive): columns.
    @inline(never)
    mutating func spaces(_ count: Int) {
        let blanks: StaticString = "                "
        var rest = count
        while rest > 0 {
            bytes.append(contentsOf: UnsafeBufferPointer(start: blanks.utf8Start, count: min(rest, 16)))
            rest -= 16
        }
    }

    struct Builder: StringInterpolationProtocol {
        var bytes: [UInt8]

        /// Room for most messages (a line of the log), with no arguments at each use.
        @inline(__always)
        init(literalCapacity: Int, interpolationCount: Int) { bytes = Builder.room() }

        @inline(never)
        static func room() -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(120)
            return bytes
        }

        @inline(__always)
        mutating func appendLiteral(_ literal: StaticString) { appendTerminated(literal.utf8Start) }

        /// See `BuiltText(terminated:)`.
        @inline(never)
        mutating func appendTerminated(_ start: UnsafePointer<UInt8>) { bytes.appendTerminated(start) }

        @inline(never)
        mutating func appendInterpolation(_ value: consuming String) {
            value.withBytes { bytes.append(contentsOf: $0) }
        }

        @inline(never)
        mutating func appendInterpolation(_ value: consuming Substring) {
            value.withBytes { bytes.append(contentsOf: $0) }
        }

        @inline(never)
        mutating func appendInterpolation(_ value: StaticString) {
            value.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        @inline(never)
        mutating func appendInterpolation(_ value: Int) {
            appendDecimal(negative: value < 0, UInt64(value.magnitude))
        }

        @inline(__always)
        mutating func appendInterpolation<T: BinaryInteger>(_ value: T) {
            appendDecimal(negative: value < 0, UInt64(truncatingIfNeeded: value.magnitude))
        }

        @inline(__always)
        mutating func appendInterpolation<T: CustomStringConvertible>(_ value: T) {
            appendInterpolation(value.description)
        }

        @inline(never)
        mutating func appendInterpolation(_ value: Bool) {
            let word: StaticString = value ? "true" : "false"
            appendTerminated(word.utf8Start)
        }

        /// Lower-case hex digits, no leading zeros (as String(value, radix: 16)).
        @inline(__always)
        mutating func appendInterpolation<T: BinaryInteger>(hex value: T) {
            appendHex(UInt64(truncatingIfNeeded: value))
        }

        @inline(never)
        mutating func appendHex(_ value: UInt64) {
            withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { digits in
                let count = writeHex(value, to: digits.baseAddress!)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[0 ..< count]))
            }
        }

        @inline(never)
        mutating func appendDecimal(negative: Bool, _ magnitude: UInt64) {
            if negative { bytes.append(0x2D) }
            withUnsafeTemporaryAllocation(byteCount: 20, alignment: 1) { digits in
                let count = writeDecimal(magnitude, to: digits.baseAddress!)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[0 ..< count]))
            }
        }
    }
}

/// A String from a literal with interpolations, built by BuiltText's outlined
/// appends rather than inlined String interpolation.
@inline(never)
func built(_ text: consuming BuiltText) -> String { text.string }

extension [UInt8] {
    /// The bytes from `start` up to (not including) the first NUL.
    @inline(never)
    mutating func appendTerminated(_ start: UnsafePointer<UInt8>) {
        append(contentsOf: UnsafeBufferPointer(start: start, count: terminatedCount(start)))
    }
}
