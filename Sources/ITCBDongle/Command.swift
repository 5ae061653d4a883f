import BLEHost
import VendorDrivers
import EightBall
import CLinux

/// The command line, parsed (Options.swift holds the table it comes from).
struct ITCBDongle {
    // Both roles
    var role: RoleOption?
    var transport = "usb"
    var btsnoop: String?
    var logLevel: String?
    var address: String?
    var controllerInfo = false
    var listControllers = false
    var healthCheck: Double?
    var udevMatch: String?
    // Peripheral
    var name = "8-Ball"
    var answers: AnswersOption = .slug
    var maxCentrals = 4
    var idleTimeout: Double?  // nil: 60 s
    var connectionInterval: String?  // nil: 15-30 ms
    var seed: UInt64?
    var metricsFile: String?
    // Central
    var question: [String] = []
    var rssiMin = -60
    var rssiMax = -20
    var timeout: Double?
    var count = 1
    var peer: String?
    var scan = false
    var json = false
    // USB
    var usbReset = false
    var exitOnUnplug = false
    var firmwareDir: String?

    /// The options' values, converted in the order given: the first bad one is the error.
    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        if let first = parsed.positional.first {
            if parsed.positional.count == 1 {
                if RoleOption(rawValue: first) != nil {
                    throw UsageError("unexpected argument '\(first)'; did you mean '--role \(first)'?")
                }
                throw UsageError("unexpected argument '\(first)' (a value with spaces needs quotes: --question \"Will it rain?\")")
            }
            let listed = parsed.positional.map { "'\($0)'" }.joined(separator: ", ")
            throw UsageError("\(parsed.positional.count) unexpected arguments: \(listed) (a value with spaces needs quotes: --question \"Will it rain?\")")
        }
        for (option, value) in parsed.options {
            switch option {
            case "role":
                guard let parsed = RoleOption(rawValue: value) else { throw UsageError("--role must be peripheral or central (got '\(value)')") }
                role = parsed
            case "transport": transport = value
            case "btsnoop": btsnoop = value
            case "log-level": logLevel = value
            case "address": address = value
            case "controller-info": controllerInfo = true
            case "list-controllers": listControllers = true
            case "health-check": healthCheck = try number(option, value)
            case "udev-match": udevMatch = value
            case "name": name = value
            case "answers":
                guard let parsed = AnswersOption(rawValue: value) else { throw UsageError("--answers must be slug or text (got '\(value)')") }
                answers = parsed
            case "max-centrals": maxCentrals = try integer(option, value)
            case "idle-timeout": idleTimeout = try number(option, value)
            case "connection-interval": connectionInterval = value
            case "seed": seed = try parseSeed(value)
            case "metrics-file": metricsFile = value
            case "question": question.append(value)
            case "rssi-min": rssiMin = try integer(option, value)
            case "rssi-max": rssiMax = try integer(option, value)
            case "timeout": timeout = try number(option, value)
            case "count": count = try integer(option, value)
            case "peer": peer = value
            case "scan": scan = true
            case "json": json = true
            case "usb-reset": usbReset = true
            case "exit-on-unplug": exitOnUnplug = true
            case "firmware-dir": firmwareDir = value
            default: break  // --help, --version and the generators are handled before
            }
        }
    }

    /// Value checks, run after parsing succeeded (so that an unknown option or
    /// a stray argument is reported first, not a missing role).
    func check() throws(UsageError) {
        if let logLevel, LogLevel(name: logLevel) == nil {
            throw UsageError("--log-level must be one of error, warning, info, debug, trace (got '\(logLevel)')")
        }
        if case .failure(let error) = TransportSpec.parse(transport) { throw UsageError(error.description) }
        if !controllerInfo, !listControllers, udevMatch == nil, role == nil {
            if scan || !question.isEmpty || peer != nil || json {
                throw UsageError("choose a role: add --role central (--scan, --question, --peer and --json are the asker's)")
            }
            throw UsageError("choose a role: --role peripheral (the 8-Ball) or --role central (the asker)")
        }
        guard !name.isEmpty, name.utf8.count <= 248 else {
            throw UsageError("--name must be 1 to 248 bytes of UTF-8 (got \(name.utf8.count) bytes)")
        }
        guard (1...Host.connectionCapacity).contains(maxCentrals) else {
            throw UsageError("--max-centrals must be between 1 and \(Host.connectionCapacity) (got \(maxCentrals))")
        }
        if let idleTimeout, !(idleTimeout >= 0 && idleTimeout <= 86_400) {
            throw UsageError("--idle-timeout must be from 0 (never) to 86400 seconds (got \(formatNumber(idleTimeout)))")
        }
        if let connectionInterval { _ = try parseConnectionInterval(connectionInterval) }
        if let metricsFile { try checkMetricsFile(metricsFile) }
        guard (-127...20).contains(rssiMin), (-127...20).contains(rssiMax), rssiMin <= rssiMax else {
            throw UsageError("--rssi-min/--rssi-max must be dBm values from -127 to 20 with min <= max (got \(rssiMin)/\(rssiMax))")
        }
        if let timeout {
            guard timeout > 0, timeout <= 600 else {
                throw UsageError("--timeout must be more than 0 and at most 600 seconds (got \(formatNumber(timeout)))")
            }
        }
        if let healthCheck {
            guard healthCheck >= 0, healthCheck <= 3600 else {
                throw UsageError("--health-check must be from 0 (off) to 3600 seconds (got \(formatNumber(healthCheck)))")
            }
        }
        guard count >= 1 else { throw UsageError("--count must be at least 1 (got \(count))") }
        for q in question {
            guard !q.trimmingCharacters().isEmpty else {
                throw UsageError("--question must not be empty: ask something, ending in '?'")
            }
            guard q.utf8.count <= Question.maxLength else {
                throw UsageError("--question is longer than \(Question.maxLength) bytes (got \(q.utf8.count))")
            }
        }
        if let address {
            guard let parsed = BDAddress(string: address, type: 1) else {
                throw UsageError("--address must look like C0:12:34:56:78:9A (got '\(address)')")
            }
            guard parsed.value >> 46 == 0b11, parsed.value & 0x3FFF_FFFF_FFFF != 0,
                  parsed.value & 0x3FFF_FFFF_FFFF != 0x3FFF_FFFF_FFFF else {
                throw UsageError("--address must be a static random address: first byte C0–FF, not all ones or zeros after it")
            }
        }
    }
}

/// --seed: a whole number 0…2^64-1 (negative values are parsed, then refused with a reason).
func parseSeed(_ text: String) throws(UsageError) -> UInt64 {
    if let value = UInt64(text, radix: 10) { return value }
    if text.hasPrefix("-"), text.utf8.count > 1, text.utf8.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 }) {
        throw UsageError("--seed: a seed cannot be negative; use 0 to 18446744073709551615 (got '\(text)')")
    }
    throw UsageError("--seed: a seed is a whole number from 0 to 18446744073709551615 (got '\(text)')")
}

/// A whole-number option's value.
func integer(_ option: String, _ text: String) throws(UsageError) -> Int {
    guard let value = parseInteger(text) else { throw UsageError("--\(option) must be a number (got '\(text)')") }
    return value
}

/// --connection-interval: "MIN-MAX" in ms (7.5 to 1000, in 1.25 ms steps
/// inward) with latency 0 and a 4 s supervision timeout, or "off" (nil).
func parseConnectionInterval(_ text: String) throws(UsageError) -> ConnectionParameters? {
    if text == "off" { return nil }
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    let bad = UsageError("--connection-interval must be MIN-MAX in ms from 7.5 to 1000 (e.g. 15-30), or off (got '\(text)')")
    guard parts.count == 2, let low = parseDouble(String(parts[0])), let high = parseDouble(String(parts[1])),
          low >= 7.5, high <= 1000, low <= high else { throw bad }
    // 1.25 ms units (Vol 4 Part E §7.8.12), rounded inward so the range stays what was asked.
    // (Truncation, not rounded(): the Embedded build needs nothing from libm.)
    var minimum = UInt16(low * 0.8)
    if Double(minimum) < low * 0.8 { minimum += 1 }
    let maximum = UInt16(high * 0.8)
    guard minimum <= maximum else { throw bad }
    return ConnectionParameters(intervalMin: minimum, intervalMax: maximum, latency: 0, timeout: 400)
}

/// A number option's value (seconds: fractions allowed).
func number(_ option: String, _ text: String) throws(UsageError) -> Double {
    guard let value = parseDouble(text) else { throw UsageError("--\(option) must be a number (got '\(text)')") }
    return value
}

/// 5 → "5", 0.5 → "0.5", -1 → "-1".
func formatNumber(_ value: Double) -> String {
    // (Whole numbers without rounded(): the Embedded build then needs nothing from libm.)
    abs(value) < 1e15 && value == Double(Int64(value)) ? String(Int64(value)) : String(value)
}

enum RoleOption: String {
    case peripheral, central
}

enum AnswersOption: String {
    case slug, text
}

#if hasFeature(Embedded)
/// The Embedded build's entry point (no CommandLine there): C's main.
@_cdecl("main")
func embeddedMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    Main.run(argc: argc, argv: argv)
}
#else
@main
enum Entry {
    static func main() { exit(Main.run(argc: CommandLine.argc, argv: CommandLine.unsafeArgv)) }
}
#endif

enum Main {
    static func run(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
        let raw = rawArguments(argc: argc, argv: argv)
        let arguments = raw.map { String(decoding: $0, as: UTF8.self) }
        JSONOutput.enabled = arguments.contains("--json")  // until the role is known: errors as objects too
        if let problem = invalidUTF8Argument(raw) { fail(problem) }
        if arguments.isEmpty {
            writeStandardError(usageText())
            return Exit.usage
        }
        // --help and --version win over anything else on the line.
        for argument in arguments {
            if argument == "--" { break }
            if argument == "--help" || argument == "-h" {
                writeRaw(1, helpText())
                return Exit.success
            }
            if argument == "--version" {
                printLine(itcbDongleVersion)
                return Exit.success
            }
        }
        let parsed: ParsedCommandLine
        switch parseCommandLine(arguments) {
        case .success(let result): parsed = result
        case .failure(let error): fail(error.message)
        }
        var command: ITCBDongle
        do throws(UsageError) {
            command = try ITCBDongle(parsed)
        } catch {
            fail(error.message)
        }
        if let repeated = repeatedOption(parsed.options) { fail(repeated) }
        if let problem = command.applyEnvironment(given: parsed) { fail(problem) }
        JSONOutput.enabled = command.json && command.role == .central
        do throws(UsageError) {
            try command.check()
        } catch {
            fail(error.message)
        }
        if let problem = inapplicableOption(given: parsed.options, role: command.role, controllerInfo: command.controllerInfo,
                                            listControllers: command.listControllers, scan: command.scan) {
            fail(problem)
        }
        return JSONOutput.finish(command.execute())
    }

    /// One line on stderr (and an error object with --json), exit 2 (README "Exit codes").
    static func fail(_ message: String) -> Never {
        writeStandardError("itcb-dongle: error: \(message) (see --help)\n")
        Log.firstError = message
        exit(JSONOutput.finish(Exit.usage))
    }
}

/// One transport session: what every role's run loop is built from.
struct Session {
    let transport: Transport
    let snoop: BTSnoopWriter?
    /// 1 for the first plug-in, 2 after the dongle came back, …
    let number: Int
    let setup: VendorSetup
    let firmwareDirectory: String
    var metrics: MetricsFile? = nil
    /// The recovery ladder's rung this session was opened for (a port reset), if any.
    var startingRung: RecoveryRung? = nil

    func runLoop<Logic: RoleLogic & ~Copyable>(host: consuming Host, logic: consuming Logic) -> RunLoop<Logic> {
        var loop = RunLoop(host: host, logic: logic, transport: transport, snoop: snoop, setup: setup, startingRung: startingRung)
        loop.firmwareDirectory = firmwareDirectory
        loop.metrics = metrics
        return loop
    }
}

extension ITCBDongle {
    func execute() -> Int32 {
        // The central is quiet unless asked: its answers and warnings only.
        Log.level = logLevel.flatMap(LogLevel.init(name:)) ?? (role == .central && !controllerInfo ? .warning : .info)
        guard case .success(let spec) = TransportSpec.parse(transport) else { return Exit.usage }
        if listControllers { return USBController.list(firmwareDirectory: firmwareDir ?? "/lib/firmware") }
        if let udevMatch { return UdevMatch.run(devpath: udevMatch) }
        Signals.install()

        var snoop: BTSnoopWriter? = nil
        if let btsnoop {
            do throws(TransportError) {
                snoop = try BTSnoopWriter(path: btsnoop)
            } catch {
                // The environment, not a bug: exit 2 as for a bad value (README "Exit codes").
                Log.error(error.description)
                return Exit.usage
            }
        }
        defer { snoop?.close() }
        // The 8-Ball's counts, kept across sessions (a re-plug, a port reset).
        let metrics = metricsFile.flatMap { role == .peripheral && !controllerInfo ? MetricsFile(path: $0, transport: transport) : nil }

        var configuration = HostConfiguration(role: role == .central ? .central : .peripheral)
        configuration.maxConnections = role == .central ? 1 : maxCentrals
        configuration.idleTimeout = UInt64((idleTimeout ?? 60) * 1000)
        if let connectionInterval { configuration.preferredParameters = try? parseConnectionInterval(connectionInterval) }
        if let address, let parsed = BDAddress(string: address, type: 1) {
            configuration.staticAddress = parsed
            configuration.forceRandomAddress = true
        } else {
            configuration.staticAddress = derivedStaticAddress(role: (role ?? .peripheral).rawValue, name: name)
        }
        let session = makeSession(configuration: configuration)
        // A dead dongle's restarts, ever further apart (RecoveryLadder.swift).
        guard SilentStarts.backOff(transport) else { return Exit.success }

        // One session per plug-in: after an unplug (USB, without --exit-on-unplug)
        // wait for a matching dongle and resume the role without a restart.
        var sessions = 0
        var portReset = usbReset
        var rung: RecoveryRung? = nil
        var chipReset = false
        var reenumeratingUntil: UInt64? = nil
        while true {
            let opened: Transport
            do throws(TransportError) {
                opened = try openTransport(spec, reset: portReset)
            } catch {
                let now = monotonicMilliseconds()
                if rung != nil, portReset, spec.isUSB, case .notFound = error {
                    // The ladder's port reset made it re-enumerate: open it again where it comes back.
                    Log.warning("\(error.description); waiting up to \(RecoveryLadder.reenumerationWait / 1000) s for it")
                    RecoveryLadder.stepBegins("dongle re-enumerating after its port reset")
                    reenumeratingUntil = now + RecoveryLadder.reenumerationWait
                    portReset = false
                }
                // Until it is back and udev has given its node the group (a new device
                // node is root's at first): every 100 ms, within the wait.
                if let until = reenumeratingUntil, now < until, USBController.waitForDevice(spec, within: until - now) {
                    continue
                }
                Log.error(error.description)
                return error.isUnplug ? Exit.unplugged : Exit.transport
            }
            reenumeratingUntil = nil
            sessions += 1
            let setup = FirmwareSetup.setup(for: opened, firmwareDirectoryGiven: firmwareDir != nil, resetFirst: chipReset)
            let end = session(Session(transport: opened, snoop: snoop, number: sessions, setup: setup,
                                      firmwareDirectory: firmwareDir ?? "/lib/firmware", metrics: metrics,
                                      startingRung: rung))
            opened.close()
            // A chip with its own reset gets it first, on the same rung (RecoveryLadder.swift).
            chipReset = end == .reopenWithChipReset
            if chipReset { continue }
            guard case .exit(let code) = end else {
                // The next session opens the dongle with a port reset (the warm-start
                // hang, the ladder's second rung): on that rung, so a bring-up left
                // unanswered ends the process (exit 4) instead of trying again.
                portReset = true
                rung = .portReset
                continue
            }
            rung = nil
            portReset = usbReset
            if code == Exit.controller { SilentStarts.record() }
            guard code == Exit.unplugged, spec.isUSB, !exitOnUnplug else { return code }
            Log.warning("dongle unplugged; waiting for it to come back (SIGINT/SIGTERM to stop)")
            guard USBController.waitForDevice(spec) else { return Exit.success }
            Log.info("dongle is back; resuming as \((role ?? .peripheral).rawValue)")
            // A dongle that has just enumerated may not answer at once (the kernel's
            // driver binds it, the machine is busy): opening it is retried for a while.
            reenumeratingUntil = monotonicMilliseconds() + RecoveryLadder.reenumerationWait
        }
    }

    /// Builds what one transport session runs: the role's logic and the run loop.
    func makeSession(configuration: HostConfiguration) -> (Session) -> SessionEnd {
        if controllerInfo {
            return { session in
                var loop = session.runLoop(host: Host(configuration: configuration, database: GATTDatabase()), logic: InfoLogic())
                return loop.run()
            }
        }
        switch role ?? .peripheral {
        case .peripheral:
            let firstSeed = seed ?? randomUInt64()
            let style: AnswerStyle = answers == .text ? .text : .slug
            return { [name, maxCentrals, answers] session in
                // The 8-Ball's services are built into the one database the host keeps.
                var database = GATTDatabase()
                var nameBytes = Capacity.DeviceName()
                Array(name.utf8.prefix(Capacity.DeviceName.capacityCount)).withUnsafeBytes { _ = nameBytes.append($0) }
                let ball = nameBytes.withBytes {
                    EightBallPeripheral(name: $0, style: style, seed: firstSeed &+ UInt64(session.number - 1), database: &database)
                }
                Log.info("peripheral \"\(name)\" on \(session.transport.description), answers as \(answers.rawValue)s, up to \(maxCentrals) centrals")
                if let note = advertisedNameNote(name) { Log.info(note) }
                var loop = session.runLoop(host: Host(configuration: configuration, database: database), logic: PeripheralLogic(ball: ball))
                loop.healthInterval = healthCheckInterval(loop.notifier)
                return loop.run()
            }
        case .central:
            return centralSession(configuration: configuration)
        }
    }

    /// --health-check, or the systemd watchdog period when it is set.
    func healthCheckInterval(_ notifier: SystemdNotifier?) -> UInt64? {
        if let healthCheck, healthCheck > 0 { return UInt64(healthCheck * 1000) }
        return notifier?.watchdogInterval
    }

    func openTransport(_ spec: TransportSpec, reset: Bool) throws(TransportError) -> Transport {
        switch spec {
        case .tcp(let host, let port):
            return try TCPTransport(host: host, port: port)
        case .serial(let path, let baud):
            return try SerialTransport(path: path, spec: baud, retry: reset)
        case .usbAny, .usbID, .usbPath:
            return try USBController.open(spec, reset: reset)
        }
    }
}
