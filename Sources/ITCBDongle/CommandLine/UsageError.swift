import CLinux

/// A one-line command-line problem (exit 2).
struct UsageError: Error {
    let message: String

    /// A literal message with interpolations is a BuiltText: one outlined
    /// append per piece at each throw, not String interpolation inlined there.
    @inline(never)
    init(_ message: consuming BuiltText) { self.message = message.string }

    @_disfavoredOverload
    init(_ message: String) { self.message = message }
}

extension UsageError {
    /// "MESSAGE (got 'VALUE')", the value escaped: the form most of the
    /// command line's messages take, built here once rather than by an
    /// interpolation at each (2026-11-28).
    @inline(never)
    init(_ message: consuming BuiltText, got value: String) {
        var text = message
        text.append(" (got '\(escaped: value)')")
        self.init(text)
    }

    /// The same for a value where argv or the environment keeps it.
    @inline(never)
    init(_ message: consuming BuiltText, got value: ArgText) {
        var text = message
        text.append(" (got '\(escaped: value)')")
        self.init(text)
    }

    /// "MESSAGE (got SECONDS)", the seconds as `formatNumber` writes them.
    @inline(never)
    init(seconds message: StaticString, got value: Double) {
        self.init("\(message) (got \(formatNumber(value)))")
    }
}
