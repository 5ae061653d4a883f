import CLinux

/// What the parser found: the options in order with their values ("" for a
/// flag), and the arguments that are no option's.
struct ParsedCommandLine {
    var options: [(name: OptionName, value: String)] = []
    var positional: [String] = []

    func has(_ name: OptionName) -> Bool { options.contains { $0.name == name } }

    /// One place that grows each array (an append is inlined code at each use).
    @inline(never)
    mutating func add(_ name: OptionName, _ value: String) { options.append((name, value)) }

    @inline(never)
    mutating func add(_ argument: String) { positional.append(argument) }
}
