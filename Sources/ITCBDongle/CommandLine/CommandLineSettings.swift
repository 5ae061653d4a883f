import BLEHost
import CLinux
import Chipsets
import EightBall

/// The command line's settings: what `parseCommandLine` found (a `ParsedCommandLine`),
/// converted and checked (Options.swift holds the table it comes from).
struct CommandLineSettings {
    // The text values are views of argv or the environment (`ArgText`): the
    // settings are copied and dropped with nothing to retain or release.
    /// Each option's text as given (a flag's is ""), by its place in `OptionName`;
    /// `ArgText.absent` where not given. One store for every option, where a
    /// field each took a case each of read()'s switch (2026-11-29).
    var given = InlineArray<30, ArgText>(repeating: .absent)
    // Both roles
    var role: RoleOption?
    var transport: ArgText { self[.transport] ?? "usb" }
    var btsnoop: ArgText? { self[.btsnoop] }
    var logLevel: ArgText? { self[.logLevel] }
    var address: ArgText? { self[.address] }
    var controllerInfo: Bool { self[.controllerInfo] != nil }
    var listControllers: Bool { self[.listControllers] != nil }
    /// `--list-controllers usb:VID:PID …`: dongles asked about, plugged in or
    /// not, as given (each a usb:VID:PID, checked when read).
    var dongleQueries: [ArgText] = []
    var healthCheck: Double?
    var udevMatch: ArgText? { self[.udevMatch] }
    // Peripheral
    var name: ArgText {
        get { self[.name] ?? "8-Ball" }
        set { self[.name] = newValue }
    }
    var answers: AnswersOption = .slug
    var maxCentrals = 4
    var idleTimeout: Double?  // nil: 60 s
    var connectionInterval: ArgText? { self[.connectionInterval] }  // nil: 15-30 ms
    var seed: UInt64?
    var metricsFile: ArgText? {
        get { self[.metricsFile] }
        set { self[.metricsFile] = newValue }
    }
    // Central
    var question: [String] = []
    var rssiMin = -60
    var rssiMax = -20
    /// --rssi-min or --rssi-max was given (--scan judges the window only then).
    var rssiGiven: Bool { self[.rssiMin] != nil || self[.rssiMax] != nil }
    var timeout: Double?
    var count = 1
    var peerText: ArgText? { self[.peer] }
    var scan: Bool { self[.scan] != nil }
    var json: Bool { self[.json] != nil }
    // USB
    var usbReset: Bool { self[.usbReset] != nil }
    var exitOnUnplug: Bool { self[.exitOnUnplug] != nil }
    var firmwareDir: ArgText? { self[.firmwareDir] }
    var deviceTree: ArgText? { self[.deviceTree] }

    /// The text `option` was given, nil when it was not.
    subscript(option: OptionName) -> ArgText? {
        get {
            let text = given[option.declaredIndex]
            return text.start == nil ? nil : text
        }
        set { given[option.declaredIndex] = newValue ?? .absent }
    }

    /// --peer for the central's code, which takes a String.
    var peer: String? { peerText?.string }

    /// The options' values, converted in the order given: the first bad one is the error.
    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        self.init()
        try read(parsed)
    }

    /// Every setting its default.
    private init() {}

    /// A method, not the initialiser itself: a throw from an initialiser
    /// destroys the fields set so far, code at each throw (2026-11-28).
    private mutating func read(_ parsed: ParsedCommandLine) throws(UsageError) {
        if !parsed.positional.isEmpty, parsed.has(.listControllers) {
            for argument in parsed.positional {
                guard case .success(.usbID) = TransportSpec.parse(argument.bytes) else {
                    throw UsageError("--list-controllers asks about dongles given as usb:VID:PID, such as usb:0bda:8771", got: argument)
                }
            }
            dongleQueries = parsed.positional
        } else if let first = parsed.positional.first {
            // One message built for one argument or several, its advice appended.
            var message: BuiltText
            if parsed.positional.count == 1 {
                message = "unexpected argument '\(escaped: first)'"
                if RoleOption(first) != nil {
                    message.append("; did you mean '--role \(first)'?")
                    throw UsageError(message)
                }
            } else {
                message = "\(parsed.positional.count) unexpected arguments: "
                var between: StaticString = ""
                for argument in parsed.positional {
                    message.appendQuoted(between, argument)
                    between = ", "
                }
            }
            message.append(" (a value with spaces needs quotes: --question \"Will it rain?\")")
            throw UsageError(message)
        }
        // Each value converted by its option's kind (one conversion, and one
        // diagnostic, per kind: `OptionValue`), then stored: its text, and a
        // typed field for those that have one.
        for (option, text) in parsed.options {
            let value = try OptionValue(option, text)
            given[option.declaredIndex] = text
            switch option {
            case .role: role = value.role
            case .healthCheck: healthCheck = value.number
            case .answers: answers = value.answers
            case .maxCentrals: maxCentrals = value.integer
            case .idleTimeout: idleTimeout = value.number
            case .seed: seed = value.seed
            case .question: question.append(text.string)
            case .rssiMin: rssiMin = value.integer
            case .rssiMax: rssiMax = value.integer
            case .timeout: timeout = value.number
            case .count: count = value.integer
            default: break  // its text (`given`) is its setting
            }
        }
    }

    /// Value checks, run after parsing succeeded (so that an unknown option or
    /// a stray argument is reported first, not a missing role).
    func check() throws(UsageError) {
        if let deviceTree, !canEnter(deviceTree) {
            throw UsageError("--device-tree must be a directory laid out as /proc/device-tree (got '\(escaped: deviceTree)': \(errnoString()))")
        }
        if let logLevel, LogLevel(argument: logLevel) == nil {
            throw UsageError("--log-level must be one of error, warning, info, debug, trace", got: logLevel)
        }
        if case .failure(let error) = TransportSpec.parse(transport.bytes) { throw UsageError(error.description) }
        if !controllerInfo, !listControllers, udevMatch == nil, role == nil {
            if scan || !question.isEmpty || peerText != nil || json {
                throw UsageError("choose a role: add --role central (--scan, --question, --peer and --json are the asker's)")
            }
            throw UsageError("choose a role: --role peripheral (the 8-Ball) or --role central (the asker)")
        }
        guard !name.isEmpty, name.count <= 248 else {
            throw UsageError("--name must be 1 to 248 bytes of UTF-8 (got \(name.count) bytes)")
        }
        guard (1...Host.connectionCapacity).contains(maxCentrals) else {
            throw UsageError("--max-centrals must be between 1 and \(Host.connectionCapacity) (got \(maxCentrals))")
        }
        if let idleTimeout, !(idleTimeout >= 0 && idleTimeout <= 86_400) {
            throw UsageError(seconds: "--idle-timeout must be from 0 (never) to 86400 seconds", got: idleTimeout)
        }
        if let connectionInterval { _ = try parseConnectionInterval(connectionInterval) }
        if let metricsFile { try checkMetricsFile(metricsFile.string) }
        guard (-127...20).contains(rssiMin), (-127...20).contains(rssiMax), rssiMin <= rssiMax else {
            throw UsageError("--rssi-min/--rssi-max must be dBm values from -127 to 20 with min <= max (got \(rssiMin)/\(rssiMax))")
        }
        if let timeout {
            guard timeout > 0, timeout <= 600 else {
                throw UsageError(seconds: "--timeout must be more than 0 and at most 600 seconds", got: timeout)
            }
        }
        if let healthCheck {
            guard healthCheck >= 0, healthCheck <= 3600 else {
                throw UsageError(seconds: "--health-check must be from 0 (off) to 3600 seconds", got: healthCheck)
            }
        }
        guard count >= 1 else { throw UsageError("--count must be at least 1 (got \(count))") }
        for q in question {
            guard !q.trimmingCharacters().isEmpty else {
                throw UsageError("--question must not be empty: ask something, ending in '?'")
            }
            let length = withBytes(q) { $0.count }  // utf8.count links String's foreign-string code
            guard length <= Question.maxLength else {
                throw UsageError("--question is longer than \(Question.maxLength) bytes (got \(length))")
            }
        }
        if let address {
            guard let parsed = BDAddress(string: address.string, type: 1) else {
                throw UsageError("--address must look like C0:12:34:56:78:9A", got: address)
            }
            guard parsed.value >> 46 == 0b11, parsed.value & 0x3FFF_FFFF_FFFF != 0,
                  parsed.value & 0x3FFF_FFFF_FFFF != 0x3FFF_FFFF_FFFF else {
                throw UsageError("--address must be a static random address: first byte C0–FF, not all ones or zeros after it")
            }
        }
    }
}

/// access("PATH/.", F_OK) succeeds (errno says why not), the path's C string
/// built as bytes: no String made for it.
@inline(never)
func canEnter(_ path: ArgText) -> Bool {
    var text: BuiltText = "\(path)/."
    text.bytes.append(0)
    return text.bytes.withUnsafeBytes { access($0.baseAddress!.assumingMemoryBound(to: CChar.self), F_OK) } == 0
}

/// How the settings read an option's value.
enum OptionKind {
    case flag, text, integer, number, seed, role, answers
}

extension OptionName {
    var kind: OptionKind {
        switch self {
        case .controllerInfo, .listControllers, .scan, .json, .usbReset, .exitOnUnplug, .version, .help: .flag
        case .maxCentrals, .rssiMin, .rssiMax, .count: .integer
        case .healthCheck, .idleTimeout, .timeout: .number
        case .seed: .seed
        case .role: .role
        case .answers: .answers
        default: .text
        }
    }
}

/// One option's value, converted as its kind says (the other fields left as they are).
struct OptionValue {
    var text: ArgText
    var integer = 0
    /// Seconds: fractions allowed.
    var number = 0.0
    var seed: UInt64 = 0
    var role = RoleOption.peripheral
    var answers = AnswersOption.slug

    /// The first bad value is the error. Not inlined: one copy of each conversion and its message.
    @inline(never)
    init(_ option: OptionName, _ text: ArgText) throws(UsageError) {
        self.text = text
        let problem: BuiltText
        switch option.kind {
        case .flag, .text: return
        case .integer, .number:
            if option.kind == .integer, let value = parseInteger(argument: text) {
                integer = value
                return
            } else if option.kind == .number, let value = parseDouble(argument: text) {
                number = value
                return
            }
            problem = "--\(option) must be a number"
        case .seed:
            // A whole number 0…2^64-1 (negative values are parsed, then refused with a reason).
            if let value = unsignedValue(parseWhole(bytes: text.bytes), maximum: UInt64.max) {
                seed = value
                return
            }
            problem = isNegativeWhole(text)
                ? "--seed: a seed cannot be negative; use 0 to 18446744073709551615"
                : "--seed: a seed is a whole number from 0 to 18446744073709551615"
        case .role:
            if let parsed = RoleOption(text) {
                role = parsed
                return
            }
            problem = "--role must be peripheral or central"
        case .answers:
            if let parsed = AnswersOption(text) {
                answers = parsed
                return
            }
            problem = "--answers must be slug or text"
        }
        throw UsageError(problem, got: text)
    }
}

/// "-" and digits only (however many).
func isNegativeWhole(_ bytes: ArgText) -> Bool {
    guard bytes.count > 1, bytes[0] == UInt8(ascii: "-") else { return false }
    for index in 1..<bytes.count where bytes[index] < 48 || bytes[index] > 57 { return false }
    return true
}

/// --connection-interval: "MIN-MAX" in ms (7.5 to 1000, in 1.25 ms steps
/// inward) with latency 0 and a 4 s supervision timeout, or "off" (nil).
func parseConnectionInterval(_ text: ArgText) throws(UsageError) -> ConnectionParameters? {
    if text.isBytes("off") { return nil }
    let bad = UsageError("--connection-interval must be MIN-MAX in ms from 7.5 to 1000 (e.g. 15-30), or off", got: text)
    // One dash between two numbers.
    guard let dash = text.firstIndex(of: UInt8(ascii: "-")),
          text.slice(dash + 1, text.count).firstIndex(of: UInt8(ascii: "-")) == nil,
          let low = parseDouble(argument: text.slice(0, dash)), let high = parseDouble(argument: text.slice(dash + 1, text.count)),
          low >= 7.5, high <= 1000, low <= high else { throw bad }
    // 1.25 ms units (Vol 4 Part E §7.8.12), rounded inward so the range stays what was asked.
    // (Truncation, not rounded(): the Embedded build needs nothing from libm.)
    var minimum = UInt16(low * 0.8)
    if Double(minimum) < low * 0.8 { minimum += 1 }
    let maximum = UInt16(high * 0.8)
    guard minimum <= maximum else { throw bad }
    return ConnectionParameters(intervalMin: minimum, intervalMax: maximum, latency: 0, timeout: 400)
}

/// 5 → "5", 0.5 → "0.5", -1 → "-1".
@inline(never)
func formatNumber(_ value: Double) -> String {
    // (Whole numbers without rounded(): the Embedded build then needs nothing from libm.)
    // doubleText's digits for those too, without the ".0" (0 and -0 are "0").
    value == 0 ? "0" : doubleText(value, whole: abs(value) < 1e15 && value == Double(Int64(value)))
}
