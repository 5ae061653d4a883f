import CLinux

/// An argument's bytes where the process keeps them (argv, the environment, a
/// literal): a pointer and a count, nothing to retain or release and no String
/// made or checked, until a value leaves the command line's code (2026-11-29).
struct ArgText: Equatable, ExpressibleByStringLiteral {
    let start: UnsafePointer<UInt8>?
    let count: Int

    init(start: UnsafePointer<UInt8>?, count: Int) {
        self.start = start
        self.count = count
    }

    init(stringLiteral literal: StaticString) { self.init(start: literal.utf8Start, count: literal.utf8CodeUnitCount) }

    /// A C string's bytes up to its NUL.
    init(cString: UnsafePointer<CChar>) {
        self.init(start: UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self), count: strlen(cString))
    }

    /// No text at all (no pointer): an option not given (`CommandLineSettings.given`).
    static var absent: ArgText { ArgText(start: nil, count: 0) }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }
    var isEmpty: Bool { count == 0 }
    subscript(index: Int) -> UInt8 { start.unsafelyUnwrapped[index] }

    /// Bytes from..<to.
    func slice(_ from: Int, _ to: Int) -> ArgText { ArgText(start: start.map { $0 + from }, count: to - from) }

    /// Where the first `byte` is.
    func firstIndex(of byte: UInt8) -> Int? {
        for index in 0..<count where self[index] == byte { return index }
        return nil
    }

    /// As a String, where a value leaves for code that takes one.
    var string: String {
        @inline(never) get { String(repairingUTF8: bytes) }
    }

    /// The same bytes as `literal`.
    @inline(never)
    func isBytes(_ literal: StaticString) -> Bool { self == ArgText(stringLiteral: literal) }

    static func == (a: ArgText, b: ArgText) -> Bool { a.count == b.count && startsWith(a.bytes, b.bytes) }
}

/// The arguments after the program's name, each where argv keeps it.
struct Arguments {
    let base: UnsafePointer<UnsafeMutablePointer<CChar>?>
    let count: Int

    init(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        base = UnsafePointer(argv + 1)
        count = max(0, Int(argc) - 1)
    }

    /// C strings copied for a caller with byte arrays (the unit tests'), kept
    /// for the process's life as argv is.
    init(copying arguments: [[UInt8]]) {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
        for index in arguments.indices {
            let bytes = arguments[index]
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for offset in bytes.indices { copy[offset] = CChar(bitPattern: bytes[offset]) }
            copy[bytes.count] = 0
            table[index] = copy
        }
        base = UnsafePointer(table)
        count = arguments.count
    }

    /// Not inlined: a strlen at each of the parser's reads.
    subscript(index: Int) -> ArgText {
        @inline(never) get {
            guard let pointer = base[index] else { return "" }
            return ArgText(cString: pointer)
        }
    }
}

extension BuiltText.Builder {
    @inline(never)
    mutating func appendInterpolation(_ value: ArgText) { bytes.append(contentsOf: value.bytes) }

    /// `\(escaped: value)`, as for a String (UntrustedText).
    @inline(__always)
    mutating func appendInterpolation(escaped value: ArgText) { bytes.appendEscaped(value) }
}

extension BuiltText {
    /// BEFORE'VALUE', the value escaped, appended in place: no text built
    /// for the piece to be appended (the messages' lists and "(got '…')").
    @inline(never)
    mutating func appendQuoted(_ before: StaticString, _ value: ArgText) {
        append(before)
        bytes.append(0x27)
        bytes.appendEscaped(value)
        bytes.append(0x27)
    }
}

extension [UInt8] {
    /// The value's bytes as `UntrustedText` escapes them.
    @inline(never)
    mutating func appendEscaped(_ value: ArgText) {
        UntrustedText.append(escaped: UnsafeRawBufferPointer(value.bytes), to: &self)
    }
}

/// `parseDouble` over an argument's bytes where they lie: an ArgText is part of
/// a NUL-ended C string (argv, the environment, a literal), so strtod reads it
/// in place, and the number must end where the text does. A piece cut before a
/// '-' (--connection-interval's MIN) reads the same: a '-' continues a number
/// only after an exponent's e or p, where the piece alone is no number either.
func parseDouble(argument text: ArgText) -> Double? {
    guard text.count > 0, let start = text.start else { return nil }
    for index in 0..<text.count where text[index] <= 32 { return nil }
    let chars = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
    var end: UnsafeMutablePointer<CChar>? = nil
    let value = strtod(chars, &end)
    guard let end, UnsafePointer(end) == chars + text.count else { return nil }
    return value
}

/// `parseInteger` over an argument's bytes.
func parseInteger(argument text: ArgText) -> Int? {
    guard let (negative, magnitude) = parseWhole(bytes: text.bytes) else { return nil }
    if negative { return magnitude <= 1 << 63 ? Int(truncatingIfNeeded: 0 &- magnitude) : nil }
    return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
}

extension LogLevel {
    /// The level a --log-level value names (`init(name:)`), no String made.
    init?(argument text: ArgText) { self.init(name: text.bytes) }
}
