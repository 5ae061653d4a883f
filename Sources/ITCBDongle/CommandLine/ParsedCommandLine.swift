import CLinux

/// What the parser found: the options in order with their values ("" for a
/// flag), and the arguments that are no option's.
struct ParsedCommandLine {
    var options: [(name: OptionName, value: String)] = []
    var positional: [String] = []

    func has(_ name: OptionName) -> Bool { options.contains { $0.name == name } }
}
