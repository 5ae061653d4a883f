import BLEHost

/// The one way text from a peer, a controller or a file reaches a terminal, a
/// log line or the journal: names heard over the air, answers, questions, GAP
/// Device Names, file names. What could move the cursor, clear the screen,
/// start a forged line or reorder what is shown becomes a visible escape:
///
/// - C0 controls, DEL and each byte of invalid UTF-8: `\x1b`, `\x7f`, `\xff`;
/// - C1 controls (U+0080–U+009F, e.g. U+009B, a one-character CSI), the bidi
///   controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069) and the line
///   and paragraph separators (U+2028/9): `\u009b`, `\u202e`;
/// - the backslash itself: `\\`, so an escape seen is one that was made.
///
/// Everything else, any language's letters included, is printed as it came.
/// JSON output keeps its own escaping (`jsonString`).
///
/// Values are escaped where they enter a line (`escaped`, `LogLine.value`);
/// the writers of String lines (`Log`, `printLine`) pass each whole line
/// through `line` as well, which escapes the same characters but leaves
/// backslashes and tabs (the columns of --scan) alone: a value escaped once
/// passes unchanged, and one that was missed still cannot forge a line.
enum UntrustedText {
    /// Where `escape` hands its pieces: a C function over a context pointer,
    /// not a closure, so the one body serves every caller (a closure made
    /// the compiler copy the body for the callers that append to an array).
    typealias Sink = @convention(c) (_ context: UnsafeMutableRawPointer, _ start: UnsafeRawPointer?, _ count: Int) -> Bool

    /// Hands `raw`, escaped, to `take` a piece at a time: runs of bytes that
    /// need nothing whole, each escape on its own. Stops where `take` says it
    /// has no room, so a full line ends between two characters, never inside one.
    @inline(never)
    static func escape(_ raw: UnsafeRawBufferPointer, wholeLine: Bool, into context: UnsafeMutableRawPointer, _ take: Sink) {
        var index = 0
        while index < raw.count {
            let end = safeRun(raw, from: index, wholeLine: wholeLine)
            guard end == index || take(context, raw.baseAddress! + index, end - index) else { return }
            guard end < raw.count else { return }
            // `end` starts what needs an escape: an invalid byte, or a character.
            var escape = Escape()
            index = end + escape.make(raw, at: end)
            let count = escape.count
            guard withUnsafeBytes(of: &escape.bytes, { take(context, $0.baseAddress, count) }) else { return }
        }
    }

    /// `raw` escaped, appended to `out`.
    @inline(never)
    static func append(escaped raw: UnsafeRawBufferPointer, wholeLine: Bool = false, to out: inout [UInt8]) {
        // The sink gets a local's address, not `out`'s: an address handed on
        // would give every caller up the chain a stack protector.
        var local: [UInt8] = []
        swap(&local, &out)
        withUnsafeMutablePointer(to: &local) { local in
            escape(raw, wholeLine: wholeLine, into: local) { out, start, count in
                out.assumingMemoryBound(to: [UInt8].self).pointee.append(contentsOf: UnsafeRawBufferPointer(start: start, count: count))
                return true
            }
        }
        swap(&local, &out)
    }

    /// Where the run of bytes from `start` that need no escape ends: `raw.count`
    /// when none does (every line, unless a value was missed).
    static func safeRun(_ raw: UnsafeRawBufferPointer, from start: Int, wholeLine: Bool) -> Int {
        var index = start
        while index < raw.count {
            // Printable ASCII but the backslash, byte by byte: a question's
            // whole text, usually (the peripheral's line per question).
            let byte = raw[index]
            if byte >= 0x20, byte < 0x7F, byte != 0x5C {
                index += 1
                continue
            }
            let length = sequenceLength(raw, at: index)
            guard length > 0, !needsEscape(decode(raw, at: index, length: length), wholeLine: wholeLine) else {
                return index
            }
            index += length
        }
        return index
    }

    /// `text` escaped, for the lines built as String (start-up, errors, the central).
    static func escaped(_ text: String) -> String {
        var out = BuiltText.Builder()
        out.appendInterpolation(escaped: text)
        return BuiltText(out).string
    }

    /// A whole line of ours as it may be written: itself when nothing in it
    /// needs escaping (every line, unless a value was missed).
    static func line(_ text: String) -> String {
        // A copy either way (only a usage error's line comes here): escaping a
        // clean line copies it unchanged.
        return withBytes(text) { escaped(UnsafeRawBufferPointer($0), wholeLine: true) }
    }

    @inline(never)
    static func escaped(_ raw: UnsafeRawBufferPointer, wholeLine: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        append(escaped: raw, wholeLine: wholeLine, to: &out)
        return String(repairingUTF8: out)
    }

    /// The length of the well-formed UTF-8 sequence at `index` (Unicode §3.9,
    /// table 3-7), or 0 when the byte there does not start one.
    static func sequenceLength(_ raw: UnsafeRawBufferPointer, at index: Int) -> Int {
        max(utf8Sequence(raw.assumingMemoryBound(to: UInt8.self), at: index), 0)
    }

    static func decode(_ raw: UnsafeRawBufferPointer, at index: Int, length: Int) -> UInt32 {
        guard length > 1 else { return UInt32(raw[index]) }
        var scalar = UInt32(raw[index]) & (0x7F >> UInt32(length))
        for i in 1..<length { scalar = scalar << 6 | UInt32(raw[index + i] & 0x3F) }
        return scalar
    }

    static func needsEscape(_ scalar: UInt32, wholeLine: Bool) -> Bool {
        switch scalar {
        case 0x09, 0x5C: !wholeLine
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// One escape, built on the stack: `\\`, `\xNN` or `\uNNNN` (lower-case hex).
    struct Escape {
        var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0x5C, 0, 0, 0, 0, 0)
        var count = 1

        /// The escape of the invalid byte or the character at `index`; how many bytes it takes.
        /// Outlined: the one copy for every caller of `escape`, whatever its `append`.
        @inline(never)
        mutating func make(_ raw: UnsafeRawBufferPointer, at index: Int) -> Int {
            let length = sequenceLength(raw, at: index)
            let scalar = length > 0 ? decode(raw, at: index, length: length) : UInt32(raw[index])
            if scalar == 0x5C {
                backslash()
            } else if length <= 1 {
                byte(raw[index])
            } else {
                self.scalar(scalar)
            }
            return max(length, 1)
        }

        mutating func backslash() { put(0x5C) }

        mutating func byte(_ value: UInt8) {
            put(UInt8(ascii: "x"))
            digits(UInt32(value), 2)
        }

        mutating func scalar(_ value: UInt32) {
            put(UInt8(ascii: "u"))
            digits(value, 4)
        }

        @inline(never)
        mutating func digits(_ value: UInt32, _ n: Int) {
            for shift in stride(from: 4 * (n - 1), through: 0, by: -4) {
                let digit = UInt8((value >> UInt32(shift)) & 0xF)
                put(digit < 10 ? 0x30 + digit : 0x57 + digit)
            }
        }

        mutating func put(_ byte: UInt8) {
            withUnsafeMutableBytes(of: &bytes) { $0[count] = byte }
            count += 1
        }

        mutating func withBytes(_ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
            let count = count
            return withUnsafeBytes(of: &bytes) { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }
}

extension String {
    /// This text as it may be printed (`UntrustedText`).
    var escaped: String { UntrustedText.escaped(self) }
}

extension FixedBytes {
    /// The bytes as they may be printed: invalid UTF-8 shown byte by byte,
    /// not replaced as `string` would.
    var escaped: String { withBytes { UntrustedText.escaped($0) } }
}
