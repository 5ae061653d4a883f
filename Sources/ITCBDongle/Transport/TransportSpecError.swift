struct TransportSpecError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension TransportSpecError {
    /// "BEFORE'VALUE'AFTER", the value escaped: built here once, not by an interpolation at each message.
    @inline(never)
    init(_ before: StaticString, quoting value: String, _ after: StaticString, _ more: String = "") {
        self.init(built("\(before)'\(escaped: value)'\(after)\(more)"))
    }

    /// The same with the value where the parser reads it.
    @inline(never)
    init(_ before: StaticString, quoting value: ArgText, _ after: StaticString, _ more: String = "") {
        self.init(built("\(before)'\(escaped: value)'\(after)\(more)"))
    }
}
