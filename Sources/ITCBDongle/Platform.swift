import CLinux

// The few libc calls Swift cannot import as they are (CLinux shims them), under
// the names the platform code uses. The same in the ordinary and the Embedded
// build: neither imports Glibc.

/// errno of the calling thread.
var errno: Int32 {
    get { clinux_errno() }
    set { clinux_set_errno(newValue) }
}

/// open(2) (variadic in C).
func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    clinux_open(cPath(path), flags, mode)
}

/// A String's bytes and a NUL, for a C call taking a path or a name: not the
/// stdlib's utf8CString (a String handed to a C pointer), about 1 KB of code.
@inline(never)
func cPath(_ text: String) -> [CChar] {
    var text = text
    return text.withUTF8 { bytes in
        [CChar](unsafeUninitializedCapacity: bytes.count + 1) { out, count in
            if let from = bytes.baseAddress { UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: from, byteCount: bytes.count) }
            out[bytes.count] = 0
            count = bytes.count + 1
        }
    }
}

/// fcntl(2) with an int argument (variadic in C).
func fcntl(_ fd: Int32, _ command: Int32, _ argument: Int32 = 0) -> Int32 {
    clinux_fcntl(fd, command, argument)
}

/// read(2), write(2), close(2) under names no method shadows.
func sysRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { clinux_read(fd, buffer, count) }
func sysWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { clinux_write(fd, buffer, count) }
func sysClose(_ fd: Int32) { _ = clinux_close(fd) }

/// The text of errno's current value.
func errnoString() -> String { String(cString: strerror(errno)) }

/// libc's Unicode character classes (C.UTF-8), loaded the first time a
/// non-ASCII character is folded or trimmed: the locale files stay unmapped
/// (about 150 KB resident) for ASCII-only runs.
nonisolated(unsafe) var unicodeLocaleLoaded = false

func loadUnicodeLocale() {
    guard !unicodeLocaleLoaded else { return }
    unicodeLocaleLoaded = true
    let name: StaticString = "C.UTF-8"
    _ = setlocale(LC_CTYPE, UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self))
}

extension String {
    /// Lower case, scalar by scalar (libc's towlower under C.UTF-8: the whole
    /// of Unicode's simple case mapping, without Swift's case tables).
    /// Built as UTF-8 bytes (a String's are valid: decoded without checks).
    func foldedCase() -> String {
        withBytes { raw in
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var index = 0
            while index < raw.count {
                let lead = raw[index]
                var scalar = UInt32(lead)
                var length = 1
                if lead < 0x80 {
                    if lead >= 65, lead <= 90 { scalar += 32 }
                } else {
                    length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
                    scalar &= 0x7F >> UInt32(length)
                    for i in 1 ..< length { scalar = scalar << 6 | UInt32(raw[index + i] & 0x3F) }
                    loadUnicodeLocale()
                    let lower = clinux_towlower(scalar)
                    // towlower's answer only when it is a scalar (as Unicode.Scalar(_:) checks).
                    if lower < 0xD800 || (lower > 0xDFFF && lower <= 0x10FFFF) { scalar = lower }
                }
                index += length
                // UTF-8 again, appended once: K (U+212A) lowers to a one-byte k.
                let count = scalar < 0x80 ? 1 : scalar < 0x800 ? 2 : scalar < 0x10000 ? 3 : 4
                let mark = count == 1 ? 0 : UInt8(truncatingIfNeeded: 0xFF00 >> count)  // 110…, 1110…, 11110…
                var encoded: UInt32 = 0  // the first byte lowest
                for i in 0 ..< count {
                    let bits = UInt8(truncatingIfNeeded: scalar >> UInt32(6 * (count - 1 - i)))
                    encoded |= UInt32(i == 0 ? mark | bits : 0x80 | (bits & 0x3F)) << UInt32(8 * i)
                }
                withUnsafeBytes(of: encoded.littleEndian) { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0 ..< count])) }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Without leading and trailing white space: ASCII's, and Unicode's as libc
    /// (iswspace under C.UTF-8) says, cut on scalars (ByteText.swift).
    func trimmingCharacters() -> String {
        trimmedWhiteSpace { scalar in
            loadUnicodeLocale()
            return clinux_iswspace(scalar.value) != 0
        }
    }
}

/// A whole number in decimal ("-70", "4"); nil for anything else.
func parseInteger(_ text: String) -> Int? { parseInteger(text[...]) }

/// A decimal number as strtod(3) reads it in the C locale ("5", "0.5", "-1",
/// "1e2"); nil unless the whole text is one.
func parseDouble(_ text: String) -> Double? {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 > 32 }) else { return nil }
    var end: UnsafeMutablePointer<CChar>? = nil
    return text.withCString { start -> Double? in
        let value = strtod(start, &end)
        guard let end, end != UnsafeMutablePointer(mutating: start), end.pointee == 0 else { return nil }
        return value
    }
}

/// 64 random bits from the kernel (getrandom(2)).
func randomUInt64() -> UInt64 {
    var value: UInt64 = 0
    _ = withUnsafeMutableBytes(of: &value) { getrandom($0.baseAddress, 8, 0) }
    return value
}
