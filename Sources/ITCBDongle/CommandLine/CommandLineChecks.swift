import CLinux

// Checks on the command line that the parser does not make: bytes that are
// not UTF-8, options given twice, and options that the run cannot use.

/// The problem with the first argument that is not valid UTF-8, naming the
/// option it belongs to; nil when every argument is valid UTF-8.
@inline(never)
func invalidUTF8Argument(_ arguments: Arguments) -> String? {
    // Over the bytes: each cut is at an ASCII byte, where the replacement of bad
    // bytes (String(decoding:)) cuts the same way as over the whole argument.
    for index in 0..<arguments.count where !isValidUTF8(arguments[index]) {
        let bytes = arguments[index]
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "-"), bytes[1] == UInt8(ascii: "-"),
           let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
            return built("\(bytes.slice(0, equals).string) must be valid UTF-8 (its value has bytes that are not)")
        }
        if index > 0, let found = optionNamed(arguments[index - 1]), found.exact, found.option.takesValue {
            return built("--\(found.option) must be valid UTF-8 (its value has bytes that are not)")
        }
        return built("argument \(index + 1) is not valid UTF-8")
    }
    return nil
}

/// The same over byte arrays (the unit tests').
func invalidUTF8Argument(_ arguments: [[UInt8]]) -> String? { invalidUTF8Argument(Arguments(copying: arguments)) }

/// By `UntrustedText`'s reading of UTF-8 (the standard library's decoder
/// was 1 KB more of code, 2026-11-28).
func isValidUTF8(_ bytes: ArgText) -> Bool {
    let raw = UnsafeRawBufferPointer(bytes.bytes)
    var index = 0
    while index < raw.count {
        let length = UntrustedText.sequenceLength(raw, at: index)
        guard length > 0 else { return false }
        index += length
    }
    return true
}

/// The same over a byte array (the unit tests').
func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { isValidUTF8(ArgText(start: $0.baseAddress, count: $0.count)) }
}

/// The option "--name" or "--name=x" names (`OptionName.named`); nil for no "--name".
func optionNamed(_ bytes: ArgText) -> (option: OptionName, exact: Bool)? {
    guard bytes.count > 2, bytes[0] == UInt8(ascii: "-"), bytes[1] == UInt8(ascii: "-") else { return nil }
    let end = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.count
    return OptionName.named(bytes: bytes.slice(2, end).bytes)
}

/// The first option given that the run cannot use, as the one-line problem
/// (exit 2, as a repeated option): the other role's, any role option with
/// --controller-info / --list-controllers, and with --scan (which asks
/// nothing) --question and --count. Nil when every option applies.
@inline(never)
func inapplicableOption(given options: [(name: OptionName, value: ArgText)], role: RoleOption?, controllerInfo: Bool,
                        listControllers: Bool, scan: Bool = false) -> String? {
    if listControllers, options.contains(where: { $0.name == .role }) {
        return "--role does not apply with --list-controllers, which lists controllers and plays no role"
    }
    let mode: StaticString = listControllers ? "--list-controllers" : "--controller-info"
    for option in options {
        let name = option.name
        if option.name == .metricsFile, listControllers || controllerInfo {
            return built("--metrics-file does not apply with \(mode), which runs no role")
        }
        let owner: RoleOption
        switch option.name.role {
        case .peripheral: owner = .peripheral
        case .central: owner = .central
        case .any: continue
        }
        if listControllers, option.name == .json { continue }  // --list-controllers usb:VID:PID --json (checked in execute)
        // "with --list-controllers", "with --controller-info" or "with --role central": one message.
        var with: (StaticString, StaticString)? = nil
        if listControllers || controllerInfo {
            with = (mode, "")
        } else if let role, role != owner {
            with = ("--role ", role.name)
        }
        if let (head, tail) = with {
            return built("--\(name) is a \(owner.name) option: it does not apply with \(head)\(tail)")
        } else if scan, option.name == .question || option.name == .count {
            return built("--\(name) does not apply with --scan, which lists 8-Balls and asks nothing")
        }
    }
    return nil
}

/// An option given more than once ("--role peripheral --role central" must not
/// quietly take the last): the problem, or nil. Only --question repeats.
@inline(never)
func repeatedOption(_ options: [(name: OptionName, value: ArgText)]) -> String? {
    // Names in the order they are first given; one pass over the rest for each.
    for (index, option) in options.enumerated() where !option.name.repeats {
        var before = false
        for earlier in 0..<index where options[earlier].name == option.name { before = true }
        guard !before else { continue }
        var count = 0
        var shown: BuiltText = ""
        for other in options where other.name == option.name {
            shown.appendQuoted(count == 0 ? " (" : ", ", other.value)
            count += 1
        }
        guard count > 1 else { continue }
        var message: BuiltText = "--\(option.name) is given \(count) times"
        if option.name.takesValue {
            message.append(shown)
            message.append(")")
        }
        message.append("; give it once (only --question repeats)")
        return message.string
    }
    return nil
}

/// The options on a command line in order, each with its value ("" for a
/// flag), as the parser finds them (empty when it finds a problem).
func givenOptions(_ arguments: [String]) -> [(name: OptionName, value: ArgText)] {
    switch parseCommandLine(arguments) {
    case .success(let parsed): parsed.options
    case .failure: []
    }
}

extension CommandLineSettings {
    /// For the systemd unit, where one variable is one argument (spaces kept)
    /// only if ExecStart always passes it: ITCB_NAME, ITCB_ANSWERS and
    /// ITCB_METRICS_FILE (the peripheral's --name, --answers, either role's
    /// --metrics-file; empty: none) and ITCB_QUESTION (the central's one
    /// --question) apply when the command line does not give the option, and
    /// only to the role that uses them, so neither role warns about the other's.
    mutating func applyEnvironment(given parsed: ParsedCommandLine) -> String? {
        // The value where the environment keeps it (empty: none); one that is
        // not UTF-8 as String(cString:) repairs it, copied once for the run.
        func variable(_ name: StaticString) -> ArgText? {
            guard let value = getenv(UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)) else { return nil }
            let text = ArgText(cString: value)
            guard !text.isEmpty else { return nil }
            return isValidUTF8(text) ? text : ArgText(cString: strdup(cPath(text.string))!)
        }
        switch role {
        case .peripheral?:
            if !parsed.has(.name), let value = variable("ITCB_NAME") { name = value }
            if !parsed.has(.answers), let value = variable("ITCB_ANSWERS") {
                guard let parsed = AnswersOption(value) else {
                    return UsageError("ITCB_ANSWERS must be slug or text", got: value).message
                }
                answers = parsed
            }
        case .central?:
            if !parsed.has(.question), !scan, let value = variable("ITCB_QUESTION") { question = [value.string] }
        case nil:
            break
        }
        if role != nil, !controllerInfo, !parsed.has(.metricsFile), let value = variable("ITCB_METRICS_FILE") {
            do throws(UsageError) { try checkMetricsFile(value.string, from: "ITCB_METRICS_FILE") } catch { return error.message }
            metricsFile = value
        }
        return nil
    }
}

/// Where a name too long for the advertising data is sent, or nil when it fits
/// whole: the 31 bytes of advertising data hold 8 bytes of name beside the
/// flags and the 128-bit UUID, the scan response 29 (Core Vol 3 Part C §11;
/// docs/COMMAND-LINE.md, `--name`).
func advertisedNameNote(_ name: String) -> String? {
    return withBytes(name) { advertisedNameNote(ArgText(start: $0.baseAddress, count: $0.count)) }
}

/// The same over the name where argv or the environment keeps it.
@inline(never)
func advertisedNameNote(_ name: ArgText) -> String? {
    guard name.count > 8 else { return nil }
    var cut = 8
    while cut > 0, name[cut] & 0xC0 == 0x80 { cut -= 1 }
    let short = name.slice(0, cut)
    let full: StaticString = name.count <= 29 ? "the full name" : "its first 29 bytes"
    return built("""
        the advertising data carries the name shortened to "\(short)"; the scan response carries \(full), \
        which scanners get when they scan actively (phones, itcb-dongle --role central; not passive scanners)
        """)
}
