import CLinux
@_exported import ITCBOptions  // the table, for every file of the program

// The command-line parser over the option table (Sources/ITCBOptions): getopt_long,
// GNU conventions; --help and the short usage. The man page and the bash, zsh and
// fish completion are written from the same table at build time, by
// Sources/ITCBDongleDocs (`make docs`), not by this program.

/// Parses the arguments (without the program name) with getopt_long over the
/// table: `--opt value` and `--opt=value`, options anywhere, `--` ends them.
/// Unlike GNU's default an abbreviation is not taken for the option
/// (`--rol` is an unknown option, with a suggestion).
func parseCommandLine(_ arguments: [String]) -> Result<ParsedCommandLine, UsageError> {
    // The C strings live until the end of the parse (getopt permutes the array).
    var strings: [UnsafeMutablePointer<CChar>?] = [strdup(Program.name)]
    for argument in arguments { strings.append(strdup(argument)) }
    let argc = Int32(strings.count)
    strings.append(nil)
    var names: [UnsafeMutablePointer<CChar>?] = []
    var longOptions: [option] = []
    for (index, spec) in optionTable.enumerated() {
        let name = strdup(spec.name)
        names.append(name)
        longOptions.append(option(name: name, has_arg: spec.value == nil ? no_argument : required_argument, flag: nil,
                                  val: Int32(256 + index)))
    }
    longOptions.append(option(name: nil, has_arg: 0, flag: nil, val: 0))
    defer {
        for pointer in strings { free(pointer) }
        for pointer in names { free(pointer) }
    }

    var parsed = ParsedCommandLine()
    var failure: UsageError? = nil
    strings.withUnsafeMutableBufferPointer { argv in
        longOptions.withUnsafeBufferPointer { table in
            clinux_getopt_reset()
            func text(_ index: Int32) -> String {
                guard index >= 0, index < argc, let pointer = argv[Int(index)] else { return "" }
                return String(cString: pointer)
            }
            while failure == nil {
                let c = getopt_long(argc, argv.baseAddress!, ":h", table.baseAddress, nil)
                if c == -1 { break }
                let next = clinux_optind()
                switch c {
                case Int32(UInt8(ascii: "h")):
                    parsed.options.append((.help, ""))
                case Int32(UInt8(ascii: ":")):
                    let token = clinux_optopt() == Int32(UInt8(ascii: "h")) ? "-h" : text(next - 1)
                    failure = UsageError("\(optionToken(token)) needs a value")
                case Int32(UInt8(ascii: "?")):
                    // optopt: a short option's character, or the val of a flag given a value (--json=1), or 0.
                    let found = clinux_optopt()
                    if found >= 256 {
                        let token = text(next - 1)
                        failure = UsageError("\(optionToken(token)) takes no value (got '\(token.escaped)')")
                    } else if found > 0 {
                        failure = unknownOption("-" + String(Unicode.Scalar(UInt8(truncatingIfNeeded: found))))
                    } else {
                        failure = unknownOption(optionToken(text(next - 1)))
                    }
                default:
                    let spec = optionTable[Int(c) - 256]
                    var token = text(next - 1)
                    var value = ""
                    if spec.value != nil, let argument = clinux_optarg() {
                        value = String(cString: argument)
                        if next >= 2, argument == UnsafePointer(argv[Int(next) - 1]) { token = text(next - 2) }
                    }
                    // GNU getopt takes a unique prefix for the option; this program does not.
                    let given = optionToken(token)
                    guard let long = given.afterBytePrefix("--"), sameBytes(long, spec.name) else {
                        failure = unknownOption(given)
                        break
                    }
                    parsed.options.append((spec.option, value))
                }
            }
            var index = clinux_optind()
            while index < argc {
                parsed.positional.append(text(index))
                index += 1
            }
        }
    }
    if let failure { return .failure(failure) }
    return .success(parsed)
}

/// "--name=x" → "--name".
func optionToken(_ token: String) -> String {
    guard token.hasBytePrefix("--"), let equals = token.firstIndex(ascii: "=") else { return token }
    return String(token[..<equals])
}

/// "unknown option '--rol'; did you mean '--role'?"
func unknownOption(_ token: String) -> UsageError {
    var message = "unknown option '\(token.escaped)'"
    if let suggestion = closestOption(to: token) { message += "; did you mean '--\(suggestion)'?" }
    return UsageError(message)
}

/// The listed option nearest to a mistyped one (edit distance at most 2, or
/// the only one it begins), nil when none is near.
func closestOption(to token: String) -> String? {
    var given = Array(token.utf8)
    while given.first == UInt8(ascii: "-") { given.removeFirst() }
    guard !given.isEmpty else { return nil }
    var best: (name: String, distance: Int)? = nil
    var prefixed: [String] = []
    for spec in optionTable where !spec.hidden {
        let name = Array(spec.name.utf8)
        if name.starts(with: given) { prefixed.append(spec.name) }
        let distance = editDistance(given, name)
        if distance <= 2, best == nil || distance < best!.distance { best = (spec.name, distance) }
    }
    if let best { return best.name }
    return prefixed.count == 1 ? prefixed[0] : nil
}

func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...max(b.count, 1) where !b.isEmpty {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// --help.
func helpText() -> String {
    var lines = ["OVERVIEW: " + Program.abstract, ""]
    lines += wrap(Program.description, indent: 0)
    lines.append("")
    for (index, usage) in Program.usage.enumerated() { lines.append((index == 0 ? "USAGE: " : "       ") + usage) }
    lines += ["", "OPTIONS:"]
    let column = 26
    for spec in optionTable where !spec.hidden {
        let head = "  " + spec.synopsis
        if head.utf8.count + 2 <= column {
            let padded = head + String(repeating: " ", count: column - head.utf8.count)
            var body = wrap(spec.fullHelp, indent: column)
            body[0] = padded + String(body[0].utf8.dropFirst(column))!
            lines += body
        } else {
            lines.append(head)
            lines += wrap(spec.fullHelp, indent: column)
        }
    }
    lines += [""] + wrap("Exit codes: " + Program.exitCodes, indent: 0)
    lines += ["", "Examples:"] + Program.examples.map { "  " + $0 }
    return lines.joined(separator: "\n") + "\n"
}

/// The short usage of a bare run.
func usageText() -> String {
    "usage: " + Program.usage.joined(separator: "\n       ")
        + "\nchoose a role: --role peripheral (the 8-Ball) or --role central (the asker); --help lists every option\n"
}
