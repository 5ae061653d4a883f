import ArgumentParser
import BLEHost
import VendorDrivers
import EightBall
import Glibc

struct ITCBDongle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "itcb-dongle",
        abstract: "A Magic 8-Ball BLE appliance on a USB Bluetooth dongle (or any H4 controller).",
        usage: """
        itcb-dongle --role peripheral [--name <name>] [--transport <transport>] [<options>]
        itcb-dongle --role central [--question <question> ...] [--transport <transport>] [<options>]
        itcb-dongle --role central --scan [--timeout <seconds>] [--json]
        itcb-dongle --list-controllers | --controller-info [--transport <transport>]
        """,
        discussion: """
        Peripheral: advertises the 8-Ball service and answers questions written to it. \
        Central: finds 8-Balls in range, asks questions, prints the answers.

        Exit codes: 0 success, 1 internal error, 2 bad command line or environment (bad value, \
        unwritable --btsnoop file, no questions on standard input), 3 transport error, \
        4 controller not responding, 5 question rejected (central), 6 no 8-Ball found (central), \
        7 timeout / device offline (central), 8 dongle unplugged (--exit-on-unplug), \
        130 central stopped by Ctrl-C (143: SIGTERM).

        Examples:
          itcb-dongle --role peripheral --transport tcp:127.0.0.1:9001 --name Kiosk
          itcb-dongle --role central --transport tcp:127.0.0.1:9002 --question "Rain?"
          itcb-dongle --role central --scan
        """,
        version: itcbDongleVersion)

    // MARK: Both roles

    @Option(help: ArgumentHelp("The role to play: peripheral (the 8-Ball) or central (the asker).", valueName: "peripheral|central"))
    var role: RoleOption?

    @Option(help: ArgumentHelp("The controller: \(TransportSpec.help).", valueName: "transport"))
    var transport: String = "usb"

    @Option(help: ArgumentHelp("Write every HCI packet to FILE in BTSnoop format (Wireshark, btmon).", valueName: "file"))
    var btsnoop: String?

    @Option(help: ArgumentHelp("error, warning, info, debug or trace (trace logs every HCI packet). Default: warning for the central (answers and warnings only), info otherwise.", valueName: "level"),
            completion: .list(LogLevel.allCases.map(\.name)))
    var logLevel: String?

    @Option(help: ArgumentHelp("Static random address to use (AA:BB:CC:DD:EE:FF, two top bits set) instead of the controller's public one. Default: the public address, or an address derived from /etc/machine-id when the controller has none.", valueName: "address"))
    var address: String?

    @Flag(help: "Print the controller's information (HCI/LMP version, manufacturer, address, LE features, buffers) and exit.")
    var controllerInfo = false

    @Flag(help: "List USB Bluetooth controllers (VID:PID, bus-port path, product, kernel driver) and exit.")
    var listControllers = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Probe the controller every N seconds (up to 3600) so one that stopped answering is reset. Default: off, or the watchdog period under systemd.", valueName: "seconds"))
    var healthCheck: Double?

    @Option(help: ArgumentHelp("For the udev rule: print ITCB_BLUETOOTH, ITCB_CONFIGURED and ITCB_INSTANCE for the USB device at this sysfs path, and exit.", valueName: "sysfs-path"))
    var udevMatch: String?

    // MARK: Peripheral

    @Option(help: ArgumentHelp("Peripheral: advertised and GAP Device Name (UTF-8, 1–248 bytes; up to 8 bytes fit whole in the advertising data, up to 29 in the scan response, which carries the full name). Default: $ITCB_NAME, else 8-Ball.", valueName: "name"))
    var name: String = "8-Ball"

    @Option(help: ArgumentHelp("Peripheral: send answers as slugs (SLUG-ANSWER-NN, what the ITCB apps expect) or as English text. Default: $ITCB_ANSWERS, else slug.", valueName: "slug|text"))
    var answers: AnswersOption = .slug

    @Option(parsing: .unconditional, help: ArgumentHelp("Peripheral: how many centrals may be connected at once (1–\(Host.connectionCapacity)).", valueName: "n"))
    var maxCentrals: Int = 4

    @Option(parsing: .unconditional, help: ArgumentHelp("Peripheral: disconnect a central that asks nothing (no accepted write: subscription or question) for this many seconds (up to 86400), so idle links cannot fill every slot; 0 = never. Default: 60.", valueName: "seconds"))
    var idleTimeout: Double?  // nil: 60 s (optional, so --help does not show "default: 60.0")

    @Option(parsing: .unconditional, help: ArgumentHelp("Peripheral: seed for the answer sequence (same seed, same answers), 0 to 18446744073709551615. Default: random.", valueName: "n"), transform: parseSeed)
    var seed: UInt64?

    // MARK: Central

    @Option(help: ArgumentHelp("Central: a question to ask (repeatable). Without it: $ITCB_QUESTION (one question) if set, else standard input, one question per line.", valueName: "question"))
    var question: [String] = []

    @Option(parsing: .unconditional, help: ArgumentHelp("Central: weakest RSSI accepted, dBm (negative values work: --rssi-min -70).", valueName: "dBm"))
    var rssiMin: Int = -60

    @Option(parsing: .unconditional, help: ArgumentHelp("Central: strongest RSSI accepted, dBm.", valueName: "dBm"))
    var rssiMax: Int = -20

    @Option(parsing: .unconditional, help: ArgumentHelp("Central: seconds (more than 0, up to 600) to wait for an answer (\"device offline\" after) and at least as long (3 s or more) to find an 8-Ball. Default: 5; --scan without it runs until Ctrl-C.", valueName: "seconds"))
    var timeout: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Central: ask each question N times (soak runs), N >= 1.", valueName: "n"))
    var count: Int = 1

    @Option(help: ArgumentHelp("Central: only this 8-Ball: its name (any case) or its address.", valueName: "name|address"))
    var peer: String?

    @Flag(help: "Central: list the 8-Balls in range (name, address, RSSI) as they appear; stops after --timeout, or at Ctrl-C without it.")
    var scan = false

    @Flag(help: "Central: print one JSON object per line on stdout for every outcome: each answer, each question's error, each 8-Ball --scan finds, and one error object for a run that fails otherwise.")
    var json = false

    // MARK: USB

    @Flag(help: "USB: reset the dongle before use (for dongles that hang on warm start).")
    var usbReset = false

    @Flag(help: "USB: exit (code 8) when the dongle is unplugged instead of waiting for it to come back.")
    var exitOnUnplug = false

    @Option(help: ArgumentHelp("Where controller firmware lives (Realtek: DIR/rtl_bt/, Debian package firmware-realtek; Intel: DIR/intel/ibt-*, firmware-iwlwifi). Default: /lib/firmware. Given, it also probes non-USB controllers for a Realtek ROM or an Intel boot loader.", valueName: "dir"))
    var firmwareDir: String?

    /// Value checks, run after parsing succeeded (so that an unknown option or
    /// a stray argument is reported first, not a missing role).
    func check() throws(ValidationError) {
        if let logLevel, LogLevel(name: logLevel) == nil {
            throw ValidationError("--log-level must be one of error, warning, info, debug, trace (got '\(logLevel)')")
        }
        if case .failure(let error) = TransportSpec.parse(transport) { throw ValidationError(error.description) }
        if !controllerInfo, !listControllers, udevMatch == nil, role == nil {
            if scan || !question.isEmpty || peer != nil || json {
                throw ValidationError("choose a role: add --role central (--scan, --question, --peer and --json are the asker's)")
            }
            throw ValidationError("choose a role: --role peripheral (the 8-Ball) or --role central (the asker)")
        }
        guard !name.isEmpty, name.utf8.count <= 248 else {
            throw ValidationError("--name must be 1 to 248 bytes of UTF-8 (got \(name.utf8.count) bytes)")
        }
        guard (1...Host.connectionCapacity).contains(maxCentrals) else {
            throw ValidationError("--max-centrals must be between 1 and \(Host.connectionCapacity) (got \(maxCentrals))")
        }
        if let idleTimeout, !(idleTimeout >= 0 && idleTimeout <= 86_400) {
            throw ValidationError("--idle-timeout must be from 0 (never) to 86400 seconds (got \(formatNumber(idleTimeout)))")
        }
        guard (-127...20).contains(rssiMin), (-127...20).contains(rssiMax), rssiMin <= rssiMax else {
            throw ValidationError("--rssi-min/--rssi-max must be dBm values from -127 to 20 with min <= max (got \(rssiMin)/\(rssiMax))")
        }
        if let timeout {
            guard timeout > 0, timeout <= 600 else {
                throw ValidationError("--timeout must be more than 0 and at most 600 seconds (got \(formatNumber(timeout)))")
            }
        }
        if let healthCheck {
            guard healthCheck >= 0, healthCheck <= 3600 else {
                throw ValidationError("--health-check must be from 0 (off) to 3600 seconds (got \(formatNumber(healthCheck)))")
            }
        }
        guard count >= 1 else { throw ValidationError("--count must be at least 1 (got \(count))") }
        for q in question {
            guard !q.trimmingCharacters().isEmpty else {
                throw ValidationError("--question must not be empty: ask something, ending in '?'")
            }
            guard q.utf8.count <= Question.maxLength else {
                throw ValidationError("--question is longer than \(Question.maxLength) bytes (got \(q.utf8.count))")
            }
        }
        if let address {
            guard let parsed = BDAddress(string: address, type: 1) else {
                throw ValidationError("--address must look like C0:12:34:56:78:9A (got '\(address)')")
            }
            guard parsed.value >> 46 == 0b11, parsed.value & 0x3FFF_FFFF_FFFF != 0,
                  parsed.value & 0x3FFF_FFFF_FFFF != 0x3FFF_FFFF_FFFF else {
                throw ValidationError("--address must be a static random address: first byte C0–FF, not all ones or zeros after it")
            }
        }
    }
}

/// --seed: a whole number 0…2^64-1 (negative values are parsed, then refused with a reason).
func parseSeed(_ text: String) throws -> UInt64 {
    if let value = UInt64(text) { return value }
    if text.hasPrefix("-"), Int64(text) != nil || text.dropFirst().allSatisfy(\.isNumber) {
        throw ValidationError("a seed cannot be negative; use 0 to 18446744073709551615")
    }
    throw ValidationError("a seed is a whole number from 0 to 18446744073709551615")
}

/// 5 → "5", 0.5 → "0.5", -1 → "-1".
func formatNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}

enum RoleOption: String, ExpressibleByArgument, CaseIterable {
    case peripheral, central
}

enum AnswersOption: String, ExpressibleByArgument, CaseIterable {
    case slug, text
}

@main
enum Main {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        JSONOutput.enabled = arguments.contains("--json")  // until the role is known: errors as objects too
        if let problem = invalidUTF8Argument(rawArguments()) { fail(problem) }
        if arguments.isEmpty {
            writeStandardError("""
            usage: \(ITCBDongle.configuration.usage?.replacingNewlines(with: "\n       ") ?? "itcb-dongle --role peripheral|central")
            choose a role: --role peripheral (the 8-Ball) or --role central (the asker); --help lists every option

            """)
            exit(Exit.usage)
        }
        var command: ITCBDongle
        do {
            command = try ITCBDongle.parse(arguments)
        } catch {
            let code = ITCBDongle.exitCode(for: error)
            if code == .success {
                print(ITCBDongle.fullMessage(for: error))
                exit(Exit.success)
            }
            let message = ITCBDongle.message(for: error).split(separator: "\n").first.map(String.init) ?? "bad command line"
            fail(parserMessage(message))
        }
        if let repeated = repeatedOption(arguments) { fail(repeated) }
        if let problem = command.applyEnvironment(given: arguments) { fail(problem) }
        JSONOutput.enabled = command.json && command.role == .central
        do {
            try command.check()
        } catch {
            fail(error.message)
        }
        for warning in ignoredOptionWarnings(arguments: arguments, role: command.role, controllerInfo: command.controllerInfo,
                                             listControllers: command.listControllers) {
            Log.warning(warning)
        }
        exit(JSONOutput.finish(command.execute()))
    }

    /// One line on stderr (and an error object with --json), exit 2 (README "Exit codes").
    static func fail(_ message: String) -> Never {
        writeStandardError("itcb-dongle: error: \(message) (see --help)\n")
        Log.firstError = message
        exit(JSONOutput.finish(Exit.usage))
    }
}

extension String {
    func replacingNewlines(with separator: String) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: separator)
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

    func runLoop<Logic: RoleLogic & ~Copyable>(host: consuming Host, logic: consuming Logic) -> RunLoop<Logic> {
        var loop = RunLoop(host: host, logic: logic, transport: transport, snoop: snoop, setup: setup)
        loop.firmwareDirectory = firmwareDirectory
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

        var configuration = HostConfiguration(role: role == .central ? .central : .peripheral)
        configuration.maxConnections = role == .central ? 1 : maxCentrals
        configuration.idleTimeout = UInt64((idleTimeout ?? 60) * 1000)
        if let address, let parsed = BDAddress(string: address, type: 1) {
            configuration.staticAddress = parsed
            configuration.forceRandomAddress = true
        } else {
            configuration.staticAddress = derivedStaticAddress(role: (role ?? .peripheral).rawValue, name: name)
        }
        let session = makeSession(configuration: configuration)

        // One session per plug-in: after an unplug (USB, without --exit-on-unplug)
        // wait for a matching dongle and resume the role without a restart.
        var sessions = 0
        var portReset = usbReset
        while true {
            let opened: Transport
            do throws(TransportError) {
                opened = try openTransport(spec, reset: portReset)
            } catch {
                Log.error(error.description)
                return error.isUnplug ? Exit.unplugged : Exit.transport
            }
            sessions += 1
            let setup = FirmwareSetup.setup(for: opened, firmwareDirectoryGiven: firmwareDir != nil)
            let end = session(Session(transport: opened, snoop: snoop, number: sessions, setup: setup,
                                      firmwareDirectory: firmwareDir ?? "/lib/firmware"))
            opened.close()
            guard case .exit(let code) = end else {
                // Once: the next session opens the dongle with a port reset.
                portReset = true
                continue
            }
            portReset = usbReset
            guard code == Exit.unplugged, spec.isUSB, !exitOnUnplug else { return code }
            Log.warning("dongle unplugged; waiting for it to come back (SIGINT/SIGTERM to stop)")
            guard USBController.waitForDevice(spec) else { return Exit.success }
            Log.info("dongle is back; resuming as \((role ?? .peripheral).rawValue)")
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
            let firstSeed = seed ?? UInt64.random(in: 0...UInt64.max)
            let style: AnswerStyle = answers == .text ? .text : .slug
            return { [name, maxCentrals, answers] session in
                // The 8-Ball's services are built into the one database the host keeps.
                var database = GATTDatabase()
                var nameBytes = FixedBytes<248>()
                Array(name.utf8.prefix(248)).withUnsafeBytes { _ = nameBytes.append($0) }
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
            return try SerialTransport(path: path, baud: baud)
        case .usbAny, .usbID, .usbPath:
            return try USBController.open(spec, reset: reset)
        }
    }
}
