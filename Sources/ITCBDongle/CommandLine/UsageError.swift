import CLinux

/// A one-line command-line problem (exit 2).
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension UsageError {
    /// "MESSAGE (got 'VALUE')", the value escaped: the form most of the
    /// command line's messages take, built here once rather than by an
    /// interpolation at each (2026-11-28).
    @inline(never)
    init(_ message: String, got value: String) {
        self.init(message + " (got '" + value.escaped + "')")
    }
}
