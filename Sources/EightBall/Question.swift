/// A question is valid UTF-8 whose last character is "?" (what the ITCB apps
/// accept; docs/COMMAND-LINE.md, "The peripheral"); anything else is refused
/// with ATT error 0x0E.
/// Because "?" is ASCII and UTF-8 is self-synchronising, the last character is
/// "?" exactly when the last byte is 0x3F in a valid sequence.
public enum Question {
    public static let maxLength = 512

    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxLength, bytes[bytes.count - 1] == 0x3F else { return false }
        return isValidUTF8(bytes)
    }

    /// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past U+10FFFF.
    public static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            var length = 0
            var low: UInt8 = 0x80, high: UInt8 = 0xBF  // allowed range of the second byte
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard i + length <= n else { return false }
            let second = bytes[i + 1]
            guard second >= low, second <= high else { return false }
            var k = 2
            while k < length {
                guard bytes[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += length
        }
        return true
    }
}
