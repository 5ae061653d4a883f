struct TransportSpecError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension TransportSpecError {
    /// "BEFORE'VALUE'AFTER", the value escaped: built here once, not by an interpolation at each message.
    @inline(never)
    init(_ before: String, quoting value: String, _ after: String) {
        self.init(before + "'" + value.escaped + "'" + after)
    }
}
