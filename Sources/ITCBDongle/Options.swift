import CLinux

// The command line's one option table. Everything a user reads about the
// options is generated from it: --help, the man page (--generate-man-page) and
// the bash, zsh and fish completion (--generate-completion-script); the parser
// (getopt_long, GNU conventions) is built from it too, and so are the sets of
// options that take a value and that belong to one role. The packaging scripts
// write the man page and completion from the binary they ship, at build time.

/// Which role an option belongs to (a warning when the other role is chosen).
enum OptionRole {
    case any, peripheral, central
}

/// What a shell completes for an option's value.
enum OptionCompletion {
    case none, file, directory
    case words([String])
}

struct OptionSpec {
    /// The long name without "--".
    let name: String
    /// The value's name as --help shows it (`<seconds>`); nil for a flag.
    let value: String?
    let help: String
    var role: OptionRole = .any
    var completion: OptionCompletion = .none
    /// Shown as "Default: ….", the way help texts that explain theirs say it.
    var defaultValue: String? = nil
    /// Only --question may be given more than once.
    var repeats = false
    /// Not listed by --help (--generate-man-page, for the packaging scripts).
    var hidden = false
    /// The short form (only --help has one: -h).
    var short: UInt8? = nil
}

enum Program {
    static let name = "itcb-dongle"
    static let abstract = "A Magic 8-Ball BLE appliance on a USB Bluetooth dongle (or any H4 controller)."
    static let usage = [
        "itcb-dongle --role peripheral [--name <name>] [--transport <transport>] [<options>]",
        "itcb-dongle --role central [--question <question> ...] [--transport <transport>] [<options>]",
        "itcb-dongle --role central --scan [--timeout <seconds>] [--json]",
        "itcb-dongle --list-controllers | --controller-info [--transport <transport>]",
    ]
    static let description = "Peripheral: advertises the 8-Ball service and answers questions written to it. "
        + "Central: finds 8-Balls in range, asks questions, prints the answers."
    static let exitCodes = "0 success, 1 internal error, 2 bad command line or environment (bad value, "
        + "unwritable --btsnoop file, no questions on standard input), 3 transport error, "
        + "4 controller not responding, 5 question rejected (central), 6 no 8-Ball found (central), "
        + "7 timeout / device offline (central), 8 dongle unplugged (--exit-on-unplug), "
        + "130 central stopped by Ctrl-C (143: SIGTERM)."
    static let examples = [
        "itcb-dongle --role peripheral --transport tcp:127.0.0.1:9001 --name Kiosk",
        "itcb-dongle --role central --transport tcp:127.0.0.1:9002 --question \"Rain?\"",
        "itcb-dongle --role central --scan",
    ]
}

/// Every option, in the order --help lists them.
let optionTable: [OptionSpec] = [
    // Both roles
    OptionSpec(name: "role", value: "peripheral|central",
               help: "The role to play: peripheral (the 8-Ball) or central (the asker).",
               completion: .words(["peripheral", "central"])),
    OptionSpec(name: "transport", value: "transport", help: "The controller: \(TransportSpec.help).",
               completion: .words(["usb", "usb:", "tcp:", "serial:"]), defaultValue: "usb"),
    OptionSpec(name: "btsnoop", value: "file",
               help: "Write every HCI packet to FILE in BTSnoop format (Wireshark, btmon).", completion: .file),
    OptionSpec(name: "log-level", value: "level",
               help: "error, warning, info, debug or trace (trace logs every HCI packet). Default: warning for the central (answers and warnings only), info otherwise.",
               completion: .words(["error", "warning", "info", "debug", "trace"])),
    OptionSpec(name: "address", value: "address",
               help: "Static random address to use (AA:BB:CC:DD:EE:FF, two top bits set) instead of the controller's public one. Default: the public address, or an address derived from /etc/machine-id when the controller has none."),
    OptionSpec(name: "controller-info", value: nil,
               help: "Print the controller's information (HCI/LMP version, manufacturer, address, LE features, buffers) and exit."),
    OptionSpec(name: "list-controllers", value: nil,
               help: "List USB Bluetooth controllers (VID:PID, bus-port path, product, kernel driver) and exit."),
    OptionSpec(name: "health-check", value: "seconds",
               help: "Probe the controller every N seconds (up to 3600) so one that stopped answering is reset. Default: off, or the watchdog period under systemd."),
    OptionSpec(name: "udev-match", value: "sysfs-path",
               help: "For the udev rule: print ITCB_BLUETOOTH, ITCB_CONFIGURED and ITCB_INSTANCE for the USB device at this sysfs path, and exit.",
               completion: .directory),
    // Peripheral
    OptionSpec(name: "name", value: "name",
               help: "Peripheral: advertised and GAP Device Name (UTF-8, 1–248 bytes; up to 8 bytes fit whole in the advertising data, up to 29 in the scan response, which carries the full name). Default: $ITCB_NAME, else 8-Ball.",
               role: .peripheral),
    OptionSpec(name: "answers", value: "slug|text",
               help: "Peripheral: send answers as slugs (SLUG-ANSWER-NN, what the ITCB apps expect) or as English text. Default: $ITCB_ANSWERS, else slug.",
               role: .peripheral, completion: .words(["slug", "text"])),
    OptionSpec(name: "max-centrals", value: "n",
               help: "Peripheral: how many centrals may be connected at once (1–8).", role: .peripheral, defaultValue: "4"),
    OptionSpec(name: "idle-timeout", value: "seconds",
               help: "Peripheral: disconnect a central that asks nothing (no accepted write: subscription or question) for this many seconds (up to 86400), so idle links cannot fill every slot; 0 = never. Default: 60.",
               role: .peripheral),
    OptionSpec(name: "connection-interval", value: "min-max|off",
               help: "Peripheral: the connection interval to ask each central for, in ms (MIN-MAX from 7.5 to 1000; Apple's guidelines want MIN >= 15 and MAX >= MIN + 15), with latency 0 and a 4 s supervision timeout; off keeps the central's. Default: 15-30.",
               role: .peripheral, completion: .words(["15-30", "off"])),
    OptionSpec(name: "seed", value: "n",
               help: "Peripheral: seed for the answer sequence (same seed, same answers), 0 to 18446744073709551615. Default: random.",
               role: .peripheral),
    OptionSpec(name: "metrics-file", value: "file",
               help: "Peripheral: write Prometheus metrics (questions, connections, recoveries, drops) to FILE, ending in .prom, for node_exporter's textfile collector: replaced every 15 s and at exit. A directory missing or read-only is warned about once; the 8-Ball serves on. Default: $ITCB_METRICS_FILE, else none.",
               role: .peripheral, completion: .file),
    // Central
    OptionSpec(name: "question", value: "question",
               help: "Central: a question to ask. Without it: $ITCB_QUESTION (one question) if set, else standard input, one question per line.",
               role: .central, repeats: true),
    OptionSpec(name: "rssi-min", value: "dBm",
               help: "Central: weakest RSSI accepted, dBm (negative values work: --rssi-min -70).", role: .central,
               defaultValue: "-60"),
    OptionSpec(name: "rssi-max", value: "dBm", help: "Central: strongest RSSI accepted, dBm.", role: .central,
               defaultValue: "-20"),
    OptionSpec(name: "timeout", value: "seconds",
               help: "Central: seconds (more than 0, up to 600) to wait for an answer (\"device offline\" after) and at least as long (3 s or more) to find an 8-Ball. Default: 5; --scan without it runs until Ctrl-C.",
               role: .central),
    OptionSpec(name: "count", value: "n", help: "Central: ask each question N times (soak runs), N >= 1.", role: .central,
               defaultValue: "1"),
    OptionSpec(name: "peer", value: "name|address", help: "Central: only this 8-Ball: its name (any case) or its address.",
               role: .central),
    OptionSpec(name: "scan", value: nil,
               help: "Central: list the 8-Balls in range (name, address, RSSI) as they appear; stops after --timeout, or at Ctrl-C without it.",
               role: .central),
    OptionSpec(name: "json", value: nil,
               help: "Central: print one JSON object per line on stdout for every outcome: each answer, each question's error, each 8-Ball --scan finds, and one error object for a run that fails otherwise.",
               role: .central),
    // USB
    OptionSpec(name: "usb-reset", value: nil, help: "USB: reset the dongle before use (for dongles that hang on warm start)."),
    OptionSpec(name: "exit-on-unplug", value: nil,
               help: "USB: exit (code 8) when the dongle is unplugged instead of waiting for it to come back."),
    OptionSpec(name: "firmware-dir", value: "dir",
               help: "Where controller firmware lives (Realtek: DIR/rtl_bt/, Debian package firmware-realtek; Intel: DIR/intel/ibt-*, firmware-iwlwifi). Default: /lib/firmware. Given, it also probes non-USB controllers for a Realtek ROM or an Intel boot loader.",
               completion: .directory),
    // The program itself
    OptionSpec(name: "generate-completion-script", value: "shell",
               help: "Print a shell completion script (bash, zsh or fish) and exit.",
               completion: .words(["bash", "zsh", "fish"])),
    OptionSpec(name: "generate-man-page", value: nil,
               help: "Print the man page (roff; dated SOURCE_DATE_EPOCH, else today) and exit.", hidden: true),
    OptionSpec(name: "version", value: nil, help: "Show the version."),
    OptionSpec(name: "help", value: nil, help: "Show help information.", short: UInt8(ascii: "h")),
]

func optionSpec(_ name: String) -> OptionSpec? {
    for spec in optionTable where spec.name == name { return spec }
    return nil
}

/// A one-line command-line problem (exit 2).
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// What getopt_long found: the options in order with their values ("" for a
/// flag), and the arguments that are no option's.
struct ParsedCommandLine {
    var options: [(name: String, value: String)] = []
    var positional: [String] = []

    func has(_ name: String) -> Bool { options.contains { $0.name == name } }
}

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
                    parsed.options.append(("help", ""))
                case Int32(UInt8(ascii: ":")):
                    let token = clinux_optopt() == Int32(UInt8(ascii: "h")) ? "-h" : text(next - 1)
                    failure = UsageError("\(optionToken(token)) needs a value")
                case Int32(UInt8(ascii: "?")):
                    // optopt: a short option's character, or the val of a flag given a value (--json=1), or 0.
                    let found = clinux_optopt()
                    if found >= 256 {
                        let token = text(next - 1)
                        failure = UsageError("\(optionToken(token)) takes no value (got '\(token)')")
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
                    guard given == "--" + spec.name else {
                        failure = unknownOption(given)
                        break
                    }
                    parsed.options.append((spec.name, value))
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
    guard token.hasPrefix("--"), let equals = token.utf8.firstIndex(of: UInt8(ascii: "=")) else { return token }
    return String(token[..<equals])
}

/// "unknown option '--rol'; did you mean '--role'?"
func unknownOption(_ token: String) -> UsageError {
    var message = "unknown option '\(token)'"
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

// MARK: - What the table generates

/// Words of a paragraph, wrapped to `width` columns after `indent` spaces.
func wrap(_ text: String, indent: Int, width: Int = 80, firstIndent: Int? = nil) -> [String] {
    var lines: [String] = []
    var line = ""
    var lineIndent = firstIndent ?? indent
    for word in text.split(separator: " ") {
        if !line.isEmpty, lineIndent + line.utf8.count + 1 + word.utf8.count > width {
            lines.append(String(repeating: " ", count: lineIndent) + line)
            line = ""
            lineIndent = indent
        }
        line += (line.isEmpty ? "" : " ") + word
    }
    if !line.isEmpty { lines.append(String(repeating: " ", count: lineIndent) + line) }
    return lines
}

extension OptionSpec {
    /// "--role <peripheral|central>", "-h, --help".
    var synopsis: String {
        var text = short.map { "-\(String(Unicode.Scalar($0))), " } ?? ""
        text += "--" + name
        if let value { text += " <\(value)>" }
        return text
    }

    var fullHelp: String {
        var text = help
        if let defaultValue { text += " Default: \(defaultValue)." }  // as the help texts that say their own
        if repeats { text += " May be given more than once." }
        return text
    }
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

/// Text for roff: backslashes, dashes and a leading dot or quote escaped.
func roff(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\e"
        case "-": out += "\\-"
        default: out.unicodeScalars.append(scalar)
        }
    }
    if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
    return out
}

/// The man page (itcb-dongle(1)), dated `date` (YYYY-MM-DD).
func manPage(date: String) -> String {
    var out = [".TH \(roff(Program.name.uppercasedASCII())) 1 \"\(date)\" \"\(roff(Program.name)) \(itcbDongleVersion)\" \"User Commands\"",
               ".SH NAME", "\(roff(Program.name)) \\- \(roff(String(Program.abstract.dropLast())))",
               ".SH SYNOPSIS", ".nf"]
    out += Program.usage.map(roff) + [".fi", ".SH DESCRIPTION", ".PP", roff(Program.description), ".SH OPTIONS"]
    for spec in optionTable where !spec.hidden {
        var names = spec.short.map { "\\fB\\-\(String(Unicode.Scalar($0)))\\fR, " } ?? ""
        names += "\\fB\(roff("--" + spec.name))\\fR"
        if let value = spec.value { names += " \\fI\(roff(value))\\fR" }
        out += [".TP", names, roff(spec.fullHelp)]
    }
    out += [".SH EXIT STATUS", roff(Program.exitCodes), ".SH EXAMPLES", ".nf"] + Program.examples.map(roff) + [".fi"]
    out += [".SH FILES",
            ".TP", "\\fI/etc/default/itcb\\-dongle\\fR",
            "Options of the kiosk service (ITCB_ROLE, ITCB_NAME, ITCB_ANSWERS, ITCB_QUESTION, ITCB_LOG_LEVEL, ITCB_EXTRA_ARGS).",
            ".TP", "\\fI/etc/itcb\\-dongle/dongles\\fR",
            "The USB dongles (VID:PID or bus\\-port path) that start the service when plugged in.",
            ".TP", "\\fI/etc/itcb\\-dongle/<bus\\-port>.conf\\fR",
            "One dongle's own options (its ITCB_NAME, say), over /etc/default/itcb\\-dongle, for its instance itcb\\-dongle@<bus\\-port>.service.",
            ".TP", "\\fI/var/log/itcb\\-dongle\\fR",
            "The one directory the service may write to for you (e.g. \\-\\-btsnoop files); its metrics files go to /var/lib/itcb\\-dongle.",
            ".SH SEE ALSO",
            "\\fBsystemctl\\fR(1), \\fBudevadm\\fR(8), \\fBbtmon\\fR(1); /usr/share/doc/itcb\\-dongle/README.md"]
    return out.joined(separator: "\n") + "\n"
}

/// SOURCE_DATE_EPOCH's day (reproducible builds), else today's, as YYYY-MM-DD (UTC).
func manPageDate() -> String {
    var seconds = time_t(time(nil))
    if let epoch = getenv("SOURCE_DATE_EPOCH"), let value = parseInteger(String(cString: epoch)) { seconds = time_t(value) }
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
}

/// A completion script for bash, zsh or fish; nil for another shell.
func completionScript(shell: String) -> String? {
    let visible = optionTable.filter { !$0.hidden }
    func quoted(_ words: [String]) -> String { words.map { "'\($0)'" }.joined(separator: " ") }
    switch shell {
    case "bash":
        var lines = ["# bash completion for itcb-dongle (generated from its option table)",
                     "_itcb_dongle() {",
                     "    local cur prev words",
                     "    cur=\"${COMP_WORDS[COMP_CWORD]}\"",
                     "    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
                     "    case \"$prev\" in"]
        for spec in visible where spec.value != nil {
            lines.append("        '--\(spec.name)')")
            switch spec.completion {
            case .words(let words):
                lines.append("            words=(\(quoted(words)))")
                lines.append("            COMPREPLY=($(compgen -W \"${words[*]}\" -- \"$cur\"))")
            case .file: lines.append("            COMPREPLY=($(compgen -f -- \"$cur\"))")
            case .directory: lines.append("            COMPREPLY=($(compgen -d -- \"$cur\"))")
            case .none: lines.append("            COMPREPLY=()")
            }
            lines.append("            return ;;")
        }
        lines += ["    esac",
                  "    words=(\(quoted(visible.flatMap { spec in (spec.short.map { ["-" + String(Unicode.Scalar($0))] } ?? []) + ["--" + spec.name] })))",
                  "    COMPREPLY=($(compgen -W \"${words[*]}\" -- \"$cur\"))",
                  "}",
                  "complete -F _itcb_dongle itcb-dongle"]
        return lines.joined(separator: "\n") + "\n"
    case "zsh":
        var lines = ["#compdef itcb-dongle", "# zsh completion for itcb-dongle (generated from its option table)", "_arguments -s \\"]
        for spec in visible {
            let help = spec.help.split(separator: ".", maxSplits: 1).first.map(String.init) ?? spec.help
            let escaped = help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "\\[")
                .replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: ":", with: "\\:")
            let names = spec.short.map { "(-\(String(Unicode.Scalar($0))) --\(spec.name))'{-\(String(Unicode.Scalar($0))),--\(spec.name)}'" }
                ?? (spec.repeats ? "*--\(spec.name)" : "--\(spec.name)")
            var action = ""
            if let value = spec.value {
                switch spec.completion {
                case .words(let words): action = ":\(value):(\(words.joined(separator: " ")))"
                case .file: action = ":\(value):_files"
                case .directory: action = ":\(value):_files -/"
                case .none: action = ":\(value): "
                }
            }
            lines.append("  '\(names)[\(escaped)]\(action)' \\")
        }
        lines[lines.count - 1].removeLast(2)
        return lines.joined(separator: "\n") + "\n"
    case "fish":
        var lines = ["# fish completion for itcb-dongle (generated from its option table)"]
        for spec in visible {
            var line = "complete -c itcb-dongle -l \(spec.name)"
            if let short = spec.short { line += " -s \(String(Unicode.Scalar(short)))" }
            if spec.value != nil {
                switch spec.completion {
                case .words(let words): line += " -x -a '\(words.joined(separator: " "))'"
                case .file: line += " -r -F"
                case .directory: line += " -x -a '(__fish_complete_directories)'"
                case .none: line += " -x"
                }
            }
            let help = spec.help.split(separator: ".", maxSplits: 1).first.map(String.init) ?? spec.help
            line += " -d '\(help.replacingOccurrences(of: "'", with: "\\'"))'"
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    default:
        return nil
    }
}

extension String {
    func uppercasedASCII() -> String {
        String(decoding: utf8.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }, as: UTF8.self)
    }
}
