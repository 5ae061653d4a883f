import CLinux

/// A one-line command-line problem (exit 2).
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
