import CLinux

/// Pieces the platform code's messages interpolate often, appended straight
/// into the text: no String made, appended and released at each use.
extension BuiltText.Builder {
    /// `\(escaped: path)`: the value as `String.escaped` shows it (UntrustedText).
    @inline(never)
    mutating func appendInterpolation(escaped value: consuming String) {
        withBytes(value) { UntrustedText.append(escaped: UnsafeRawBufferPointer($0), to: &bytes) }
    }

    /// `\(errnoText)`: errno's text, as `errnoString()` gives it.
    @inline(never)
    mutating func appendInterpolation(_ error: ErrnoText) {
        let text = strerror(error.code)!
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }
}

/// errno's value where a message names it (`\(errnoText)`).
struct ErrnoText { let code: Int32 }

/// errno now, for a message.
var errnoText: ErrnoText { ErrnoText(code: errno) }
