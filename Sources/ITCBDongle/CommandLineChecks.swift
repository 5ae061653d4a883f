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
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        if argument == "--" { break }
        if let name = optionName(argument) {
            if !given.contains(name) { given.append(name) }
            if valueOptions.contains(name), !argument.contains("=") { index += 1 }
        }
        index += 1
    }
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
