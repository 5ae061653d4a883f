/// An option's row in the table: what --help, the man page and the completion
/// say of it. What the parser needs of an option (does it take a value, whose
/// is it, may it repeat) is its name's (`OptionName`, below): switches the
/// compiler makes small constant tables of, so the shipped program reads them
/// without building this table (2026-11-28).
public struct OptionSpec: Sendable {
    public let option: OptionName
    /// Not listed by --help (--generate-man-page, for the packaging scripts).
    /// Beside `option`, so the two share a word (the rows are constant data: 8 bytes each).
    public var hidden = false
    /// The value's name as --help shows it (`<seconds>`); nil for a flag (as `option.takesValue` says).
    public let value: String?
    public let help: String
    /// Shown as "Default: ….", the way help texts that explain theirs say it.
    public var defaultValue: String? = nil

    public var role: OptionRole { option.role }
    /// Only --question may be given more than once.
    public var repeats: Bool { option.repeats }
    /// The short form (only --help has one: -h).
    public var short: UInt8? { option.short }
    public var completion: OptionCompletion { option.completion }
}

extension OptionSpec {
    /// The long name without "--".
    public var name: String { option.rawValue }

    /// "--role <peripheral|central>", "-h, --help".
    public var synopsis: String {
        var text = short.map { "-\(String(Unicode.Scalar($0))), " } ?? ""
        text += "--" + name
        if let value { text += " <\(value)>" }
        return text
    }

    public var fullHelp: String {
        var text = help
        if let defaultValue { text += " Default: \(defaultValue)." }  // as the help texts that say their own
        if repeats { text += " May be given more than once." }
        return text
    }
}

extension OptionName {
    /// It takes a value (the next argument, or after "="); a flag does not.
    public var takesValue: Bool {
        switch self {
        case .controllerInfo, .listControllers, .scan, .json, .usbReset, .exitOnUnplug, .version, .help: false
        default: true
        }
    }

    /// Which role it belongs to (a warning when the other role is chosen).
    public var role: OptionRole {
        switch self {
        case .name, .answers, .maxCentrals, .idleTimeout, .connectionInterval, .seed: .peripheral
        case .question, .rssiMin, .rssiMax, .timeout, .count, .peer, .scan, .json: .central
        default: .any
        }
    }

    /// Only --question may be given more than once.
    public var repeats: Bool { self == .question }

    /// The short form (only --help has one: -h).
    public var short: UInt8? { self == .help ? UInt8(ascii: "h") : nil }

    /// What a shell completes for its value (the docs tool's: the shipped program does not link it).
    public var completion: OptionCompletion {
        switch self {
        case .role: .words(["peripheral", "central"])
        case .transport: .words(["usb", "usb:", "tcp:", "serial:"])
        case .btsnoop, .metricsFile: .file
        case .logLevel: .words(["error", "warning", "info", "debug", "trace"])
        case .udevMatch, .firmwareDir, .deviceTree: .directory
        case .answers: .words(["slug", "text"])
        case .connectionInterval: .words(["15-30", "off"])
        default: .none
        }
    }
}
