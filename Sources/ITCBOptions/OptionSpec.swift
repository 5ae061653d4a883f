public struct OptionSpec: Sendable {
    public let option: OptionName
    /// The value's name as --help shows it (`<seconds>`); nil for a flag.
    public let value: String?
    public let help: String
    public var role: OptionRole = .any
    public var completion: OptionCompletion = .none
    /// Shown as "Default: ….", the way help texts that explain theirs say it.
    public var defaultValue: String? = nil
    /// Only --question may be given more than once.
    public var repeats = false
    /// Not listed by --help (--generate-man-page, for the packaging scripts).
    public var hidden = false
    /// The short form (only --help has one: -h).
    public var short: UInt8? = nil
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
