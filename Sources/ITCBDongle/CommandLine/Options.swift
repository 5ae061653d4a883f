import CLinux
@_exported import ITCBOptions  // the table, for every file of the program

// The command-line parser over the option table (Sources/ITCBOptions): GNU
// conventions, as getopt_long reads them (it did the parsing until 2026-11-28);
// --help and the short usage. The man page and the bash, zsh and fish
// completion are written from the same table at build time, by
// Sources/ITCBDongleDocs (`make docs`), not by this program.

/// Parses the arguments (without the program name) over the table as GNU
/// getopt_long does, with its diagnostics: `--opt value` and `--opt=value`,
/// options anywhere (the other arguments in order, as getopt permutes them),
/// `--` ends them, `-h` the one short option (several may share a dash: the
/// first unknown one is the error). Unlike GNU's default an abbreviation is not
/// taken for the option (`--rol` is an unknown option, with a suggestion); an
/// abbreviation getopt_long would take still gets its "needs a value" and
/// "takes no value". (POSIXLY_CORRECT, which made getopt_long stop at the first
/// argument that is no option's, no longer applies.) A walk over the table:
/// getopt_long needed the table copied into C strings and the arguments too.
func parseCommandLine(_ arguments: [String]) -> Result<ParsedCommandLine, UsageError> {
    parseCommandLine(Arguments(copying: arguments.map { Array($0.utf8) }))
}

/// The same over the arguments where argv keeps them (Main.run's, valid UTF-8
/// by then): each cut is at an ASCII byte, and values and positional arguments
/// stay views of argv (no String, no array per argument, 2026-11-29).
func parseCommandLine(_ arguments: Arguments) -> Result<ParsedCommandLine, UsageError> {
    let dash = UInt8(ascii: "-")
    var parsed = ParsedCommandLine()
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        if argument.count == 2, argument[0] == dash, argument[1] == dash {
            while index < arguments.count {
                parsed.add(arguments[index])
                index += 1
            }
            break
        }
        guard argument.count > 1, argument[0] == dash else {
            parsed.add(argument)
            continue
        }
        guard argument[1] == dash else {
            for offset in 1..<argument.count {
                let byte = argument[offset]
                guard byte == UInt8(ascii: "h") else { return .failure(unknownShortOption(byte)) }
                parsed.add(.help, "")
            }
            continue
        }
        let equals = argument.firstIndex(of: UInt8(ascii: "="))
        let name = argument.slice(2, equals ?? argument.count)
        guard let (option, exact) = OptionName.named(bytes: name.bytes) else {
            return .failure(unknownOption("--\(name)"))
        }
        var value: ArgText = ""
        if !option.takesValue {
            if equals != nil { return .failure(UsageError("--\(name) takes no value (got '\(escaped: argument)')")) }
        } else if let equals {
            value = argument.slice(equals + 1, argument.count)
        } else if index < arguments.count {
            value = arguments[index]
            index += 1
        } else {
            return .failure(UsageError("--\(name) needs a value"))
        }
        guard exact else { return .failure(unknownOption("--\(name)")) }
        parsed.add(option, value)
    }
    return .success(parsed)
}

/// "unknown option '--rol'; did you mean '--role'?"
@inline(never)
func unknownOption(_ token: consuming BuiltText) -> UsageError {
    // Over the token's bytes: no String made of it (2026-11-29).
    token.bytes.withUnsafeBufferPointer { bytes in
        var message: BuiltText = "unknown option '\(escaped: ArgText(start: bytes.baseAddress, count: bytes.count))'"
        if let suggestion = closestOption(bytes: bytes) { message.append("; did you mean '--\(suggestion)'?") }
        return UsageError(message)
    }
}

/// "-x": the byte taken for the scalar of its value, as `String(Unicode.Scalar(byte))`
/// spells it (a byte from 0x80 is that Latin-1 letter's two bytes of UTF-8).
@inline(never)
func unknownShortOption(_ byte: UInt8) -> UsageError {
    var token: BuiltText = "-"
    if byte < 0x80 {
        token.bytes.append(byte)
    } else {
        token.bytes.append(0xC0 | byte >> 6)
        token.bytes.append(0x80 | byte & 0x3F)
    }
    return unknownOption(token)
}

/// The listed option nearest to a mistyped one (edit distance at most 2, or
/// the only one it begins), nil when none is near. Over the token's and the
/// names' bytes in place: no array per option (2026-11-29).
func closestOption(to token: String) -> OptionName? {
    return withBytes(token) { closestOption(bytes: $0) }
}

/// The same over the token's bytes.
func closestOption(bytes whole: UnsafeBufferPointer<UInt8>) -> OptionName? {
    var skip = 0
    while skip < whole.count, whole[skip] == UInt8(ascii: "-") { skip += 1 }
    let given = UnsafeBufferPointer(rebasing: whole[skip...])
    guard !given.isEmpty else { return nil }
    // Options, not their names, kept: no array of Strings to grow.
    var best: OptionName? = nil, bestDistance = 3
    var prefixed: OptionName? = nil, prefixes = 0
    for index in optionRows.indices where !optionRows[index].hidden {
        let option = optionRows[index].option
        let name = option.nameBytes
        if startsWith(name, given) {
            prefixed = option
            prefixes += 1
        }
        let distance = editDistance(given, name)
        if distance < bestDistance { (best, bestDistance) = (option, distance) }
    }
    if let best { return best }
    return prefixes == 1 ? prefixed : nil
}

/// Levenshtein's, over one row: `row[j]` is the distance from a's first i
/// bytes to b's first j, overwritten in place as i grows. `b` is an option's
/// name (at most 19 bytes: the row is on the stack); a
/// longer `b` is taken as far from everything.
func editDistance(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
    var row = InlineArray<32, Int>(repeating: 0)
    guard b.count < row.count else { return Int.max }
    for j in 0...b.count { row[j] = j }
    for i in 0..<a.count {
        var diagonal = row[0]  // the row before's [j]
        row[0] = i + 1
        for j in 0..<b.count {
            let above = row[j + 1]
            row[j + 1] = min(above + 1, row[j] + 1, diagonal + (a[i] == b[j] ? 0 : 1))
            diagonal = above
        }
    }
    return row[b.count]
}

/// --help as a String (the tests').
func helpText() -> String { helpBytes().string }

/// --help: built as bytes, one outlined append per piece (no BuiltText made
/// per piece to be appended), and written as they are (no String made of them).
@inline(never)
func helpBytes() -> BuiltText {
    var out = BuiltText.Builder()
    out.appendLiteral("OVERVIEW: ")
    out.appendInterpolation(Program.abstract)
    out.appendLiteral("\n\n")
    wrap(utf8Array(Program.description), indent: 0, into: &out.bytes)
    out.appendLiteral("\n")
    appendLines(Program.usageLines, first: "USAGE: ", rest: "       ", into: &out.bytes)
    out.appendLiteral("\nOPTIONS:\n")
    let column = 26
    for index in optionRows.indices where !optionRows[index].hidden {
        let spec = optionRows[index]
        // The name (OptionSpec.synopsis), and its help beside it when two
        // spaces still fit before the column, else below.
        let start = out.bytes.count
        out.appendLiteral(spec.short == nil ? "  --" : "  -h, --")
        out.appendInterpolation(spec.option)
        if let value = spec.value {
            out.appendLiteral(" <")
            out.appendInterpolation(value)
            out.appendLiteral(">")
        }
        let width = out.bytes.count - start
        let beside = width + 2 <= column
        if beside { appendSpaces(column - width, to: &out.bytes) } else { out.appendLiteral("\n") }
        // OptionSpec.fullHelp.
        var help = BuiltText.Builder()
        help.appendInterpolation(spec.help)
        if let defaultValue = spec.defaultValue {
            help.appendLiteral(" Default: ")
            help.appendInterpolation(defaultValue)
            help.appendLiteral(".")
        }
        if spec.repeats { help.appendLiteral(" May be given more than once.") }
        wrap(help.bytes, indent: column, into: &out.bytes, indented: beside)
    }
    out.appendLiteral("\n")
    let exitCodes: BuiltText = "Exit codes: \(Program.exitCodes)"
    wrap(exitCodes.bytes, indent: 0, into: &out.bytes)
    out.appendLiteral("\nExamples:\n")
    appendLines(Program.exampleLines, first: "  ", rest: "  ", into: &out.bytes)
    return BuiltText(out)
}

/// Each line of `text` after `first` (the first line's) or `rest` (the others'), each ended by a newline.
@inline(never)
func appendLines(_ text: StaticString, first: StaticString, rest: StaticString, into out: inout [UInt8]) {
    let bytes = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    var lead = first
    var start = 0
    while start < bytes.count {
        var end = start
        while end < bytes.count, bytes[end] != 0x0A { end += 1 }
        lead.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
        out.append(0x0A)
        lead = rest
        start = end + 1
    }
}

/// The short usage of a bare run.
@inline(never)
func usageText() -> BuiltText {
    var out = BuiltText(stringLiteral: "")
    appendLines(Program.usageLines, first: "usage: ", rest: "       ", into: &out.bytes)
    out.append("choose a role: --role peripheral (the 8-Ball) or --role central (the asker); --help lists every option\n")
    return out
}

/// Text written to `fd` as it is (--help's, the usage's: no String made of it).
@inline(never)
func writeBytes(_ fd: Int32, _ text: borrowing BuiltText) {
    _ = text.bytes.withUnsafeBytes { sysWrite(fd, $0.baseAddress, $0.count) }
}
