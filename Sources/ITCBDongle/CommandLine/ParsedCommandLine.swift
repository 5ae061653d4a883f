import CLinux

/// What the parser found: the options in order with their values ("" for a
/// flag), and the arguments that are no option's, as views of argv.
struct ParsedCommandLine {
    var options: [(name: OptionName, value: ArgText)] = []
    var positional: [ArgText] = []

    func has(_ name: OptionName) -> Bool { options.contains { $0.name == name } }

    /// One place that grows each array (an append is inlined code at each use).
    @inline(never)
    mutating func add(_ name: OptionName, _ value: ArgText) { options.append((name, value)) }

    @inline(never)
    mutating func add(_ argument: ArgText) { positional.append(argument) }
}
