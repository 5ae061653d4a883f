import Glibc

// Checks on the command line that swift-argument-parser cannot make: bytes that
// are not UTF-8 (CommandLine.arguments has already replaced them with U+FFFD)
// and options that the chosen role does not use.

/// The arguments as the kernel passed them (argv[1...]), bytes untouched.
func rawArguments() -> [[UInt8]] {
    (1..<Int(CommandLine.argc)).map { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
    }
}

/// The problem with the first argument that is not valid UTF-8, naming the
/// option it belongs to; nil when every argument is valid UTF-8.
func invalidUTF8Argument(_ arguments: [[UInt8]]) -> String? {
    for (index, bytes) in arguments.enumerated() where !isValidUTF8(bytes) {
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("--"), let equals = text.firstIndex(of: "=") {
            return "\(text[..<equals]) must be valid UTF-8 (its value has bytes that are not)"
        }
        if index > 0, let option = optionName(arguments[index - 1]), valueOptions.contains(option) {
            return "--\(option) must be valid UTF-8 (its value has bytes that are not)"
        }
        return "argument \(index + 1) is not valid UTF-8"
    }
    return nil
}

func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}

/// "--name" or "--name=x" → "name".
func optionName(_ bytes: [UInt8]) -> String? {
    let text = String(decoding: bytes, as: UTF8.self)
    return optionName(text)
}

func optionName(_ text: String) -> String? {
    guard text.hasPrefix("--"), text.count > 2 else { return nil }
    let body = text.dropFirst(2)
    return String(body.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
}

/// Options that take a value (the next argument, or after "=").
let valueOptions: Set<String> = [
    "role", "transport", "btsnoop", "log-level", "address", "health-check", "udev-match",
    "name", "answers", "max-centrals", "idle-timeout", "seed",
    "question", "rssi-min", "rssi-max", "timeout", "count", "peer",
]

/// Options that only one role uses.
let peripheralOptions: Set<String> = ["name", "answers", "max-centrals", "idle-timeout", "seed"]
let centralOptions: Set<String> = ["question", "rssi-min", "rssi-max", "timeout", "count", "peer", "scan", "json"]

/// One warning per option given that the run will not use (the other role's,
/// or any role option with --controller-info / --list-controllers).
func ignoredOptionWarnings(arguments: [String], role: RoleOption?, controllerInfo: Bool, listControllers: Bool) -> [String] {
    var given: [String] = []
    for option in givenOptions(arguments) where !given.contains(option.name) { given.append(option.name) }
    var warnings: [String] = []
    for name in given {
        let isPeripheral = peripheralOptions.contains(name)
        let isCentral = centralOptions.contains(name)
        guard isPeripheral || isCentral else { continue }
        let owner = isPeripheral ? "peripheral" : "central"
        if listControllers || controllerInfo {
            let mode = listControllers ? "--list-controllers" : "--controller-info"
            warnings.append("--\(name) is a \(owner) option: ignored with \(mode)")
        } else if let role, role.rawValue != owner {
            warnings.append("--\(name) is a \(owner) option: ignored with --role \(role.rawValue)")
        }
    }
    return warnings
}

/// An option given more than once ("--role peripheral --role central" must not
/// quietly take the last): the problem, or nil. Only --question repeats.
func repeatedOption(_ arguments: [String]) -> String? {
    var values: [String: [String]] = [:]
    var order: [String] = []
    for (name, value) in givenOptions(arguments) {
        if values[name] == nil { order.append(name) }
        values[name, default: []].append(value)
    }
    for name in order where name != "question" {
        guard let given = values[name], given.count > 1 else { continue }
        let shown = valueOptions.contains(name) ? " (" + given.map { "'\($0)'" }.joined(separator: ", ") + ")" : ""
        return "--\(name) is given \(given.count) times\(shown); give it once (only --question repeats)"
    }
    return nil
}

/// The options on a command line in order, each with its value ("" for a flag):
/// "--name X" and "--name=X" alike; a value is never taken for an option.
func givenOptions(_ arguments: [String]) -> [(name: String, value: String)] {
    var options: [(name: String, value: String)] = []
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        if argument == "--" { break }
        if let name = optionName(argument) {
            var value = ""
            if let equals = argument.firstIndex(of: "=") {
                value = String(argument[argument.index(after: equals)...])
            } else if valueOptions.contains(name), index + 1 < arguments.count {
                value = arguments[index + 1]
                index += 1
            }
            options.append((name, value))
        }
        index += 1
    }
    return options
}

/// swift-argument-parser's messages in the program's own style (lower case,
/// "--option must …"), e.g. "The value 'peripheal' is invalid for '--role
/// <peripheral|central>'. Please provide one of …" → "--role must be
/// peripheral or central (got 'peripheal')".
func parserMessage(_ message: String) -> String {
    if let rest = message.dropPrefix("The value '"), let quote = rest.firstRange(of: "' is invalid for '") {
        let value = String(rest[..<quote.lowerBound])
        let after = rest[quote.upperBound...]
        let option = String(after.prefix { $0 != " " && $0 != "'" })
        if let reason = after.firstRange(of: "': ") {
            return "\(option): \(after[reason.upperBound...]) (got '\(value)')"
        }
        if let open = after.firstIndex(of: "<"), let close = after.firstIndex(of: ">"), open < close,
           after[after.index(after: open)..<close].contains("|") {
            let choices = after[after.index(after: open)..<close].split(separator: "|")
            let listed = choices.dropLast().joined(separator: ", ") + " or " + (choices.last.map(String.init) ?? "")
            return "\(option) must be \(listed) (got '\(value)')"
        }
        return "\(option) must be a number (got '\(value)')"
    }
    if let rest = message.dropPrefix("Missing value for '") {
        return "\(rest.prefix { $0 != " " && $0 != "'" }) needs a value"
    }
    if let rest = message.dropPrefix("Unexpected argument '"), let end = rest.firstIndex(of: "'") {
        let argument = rest[..<end]
        if RoleOption(rawValue: String(argument)) != nil {
            return "unexpected argument '\(argument)'; did you mean '--role \(argument)'?"
        }
        return "unexpected argument '\(argument)' (a value with spaces needs quotes: --question \"Will it rain?\")"
    }
    if message.contains("unexpected arguments") {
        return lowerCased(message) + " (a value with spaces needs quotes: --question \"Will it rain?\")"
    }
    return lowerCased(message)
}

/// "Unknown option '--rol'. Did you mean '--role'?" → "unknown option '--rol'; did you mean '--role'?"
func lowerCased(_ sentence: String) -> String {
    var text = sentence
    while text.hasSuffix(".") { text.removeLast() }
    return text.split(separator: ". ", omittingEmptySubsequences: false).map { part -> String in
        guard let first = part.first, first.isUppercase, part.dropFirst().first?.isLowercase ?? false else { return String(part) }
        return first.lowercased() + part.dropFirst()
    }.joined(separator: "; ")
}

extension String {
    func dropPrefix(_ prefix: String) -> Substring? {
        hasPrefix(prefix) ? dropFirst(prefix.count) : nil
    }

    func replacingOccurrences(of target: String, with replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

extension ITCBDongle {
    /// For the systemd unit, where one variable is one argument (spaces kept)
    /// only if ExecStart always passes it: ITCB_NAME and ITCB_ANSWERS (the
    /// peripheral's --name, --answers) and ITCB_QUESTION (the central's one
    /// --question) apply when the command line does not give the option, and
    /// only to the role that uses them, so neither role warns about the other's.
    mutating func applyEnvironment(given arguments: [String]) -> String? {
        let given = Set(givenOptions(arguments).map(\.name))
        func variable(_ name: String) -> String? {
            guard let value = getenv(name) else { return nil }
            let text = String(cString: value)
            return text.isEmpty ? nil : text
        }
        switch role {
        case .peripheral?:
            if !given.contains("name"), let value = variable("ITCB_NAME") { name = value }
            if !given.contains("answers"), let value = variable("ITCB_ANSWERS") {
                guard let parsed = AnswersOption(rawValue: value) else {
                    return "ITCB_ANSWERS must be slug or text (got '\(value)')"
                }
                answers = parsed
            }
        case .central?:
            if !given.contains("question"), !scan, let value = variable("ITCB_QUESTION") { question = [value] }
        case nil:
            break
        }
        return nil
    }
}

/// Where a name too long for the advertising data is sent, or nil when it fits
/// whole: the 31 bytes of advertising data hold 8 bytes of name beside the
/// flags and the 128-bit UUID, the scan response 29 (Core Vol 3 Part C §11;
/// docs/COMMAND-LINE.md, `--name`).
func advertisedNameNote(_ name: String) -> String? {
    let bytes = Array(name.utf8)
    guard bytes.count > 8 else { return nil }
    var cut = 8
    while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
    let short = String(decoding: bytes[0..<cut], as: UTF8.self)
    let full = bytes.count <= 29 ? "the full name" : "its first 29 bytes"
    return "the advertising data carries the name shortened to \"\(short)\"; the scan response carries \(full), "
        + "which scanners get when they scan actively (phones, itcb-dongle --role central; not passive scanners)"
}
