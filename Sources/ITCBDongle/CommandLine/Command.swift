// `Main`: not in Main.swift, which a case-insensitive file system takes for main.swift (top-level code).
import BLEHost
import Chipsets
import EightBall
import CLinux

enum Main {
    static func run(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
        let raw = Arguments(argc: argc, argv: argv)
        // Until the role is known: errors as objects too.
        for index in 0..<raw.count where raw[index].isBytes("--json") { JSONOutput.enabled = true }
        if let problem = invalidUTF8Argument(raw) { fail(problem) }
        if raw.count == 0 {
            PromptLine.end()  // as writeStandardError does
            writeBytes(2, usageText())
            return Exit.usage
        }
        // --help and --version win over anything else on the line.
        for index in 0..<raw.count {
            let argument = raw[index]
            if argument.isBytes("--") { break }
            if argument.isBytes("--help") || argument.isBytes("-h") {
                writeBytes(1, helpBytes())
                return Exit.success
            }
            if argument.isBytes("--version") {
                printLine(itcbDongleVersion)
                return Exit.success
            }
        }
        // The first problem, in this order, is the one line (one `fail` for all).
        var command: CommandLineSettings
        do throws(UsageError) {
            let parsed = try parseCommandLine(raw).get()
            command = try CommandLineSettings(parsed)
            if let repeated = repeatedOption(parsed.options) { throw UsageError(repeated) }
            if let problem = command.applyEnvironment(given: parsed) { throw UsageError(problem) }
            JSONOutput.enabled = command.json && command.role == .central
            try command.check()
            if let problem = inapplicableOption(given: parsed.options, role: command.role, controllerInfo: command.controllerInfo,
                                                listControllers: command.listControllers, scan: command.scan) {
                throw UsageError(problem)
            }
        } catch {
            fail(error.message)
        }
        return JSONOutput.finish(command.execute())
    }

    /// One line on stderr (and an error object with --json), exit 2 (README "Exit codes").
    @inline(never)
    static func fail(_ message: String) -> Never {
        // writeLine: the prefix, the line's escapes and the newline, as a log line gets them.
        writeLine(2, .error, built("\(message) (see --help)"))
        Log.firstError = message
        exit(JSONOutput.finish(Exit.usage))
    }
}

extension CommandLineSettings {
    /// Not inlined into Main.run: the two apart are smaller (`Outlined`).
    @inline(never)
    func execute() -> Int32 {
        // The central is quiet unless asked: its answers and warnings only.
        Log.level = logLevel.flatMap { LogLevel(argument: $0) } ?? (role == .central && !controllerInfo ? .warning : .info)
        guard case .success(let spec) = TransportSpec.parse(transport.bytes) else { return Exit.usage }
        return run(spec)
    }

    /// The rest of execute(), given the transport: the spec (with its Strings)
    /// is dropped once, by the caller, not at each return here.
    @inline(never)
    func run(_ spec: TransportSpec) -> Int32 {
        DeviceTree.current = Outlined.deviceTree(deviceTree)
        if listControllers, !dongleQueries.isEmpty {
            return Outlined.dongleQuery(dongleQueries, json: json)
        }
        if listControllers, json {
            Log.error("--json applies with --list-controllers usb:VID:PID (a dongle asked about), not to the list")
            return Exit.usage
        }
        if listControllers {
            return Outlined.listControllers(firmwareDir: firmwareDir, spec: spec)
        }
        // Over the argument's bytes (valid UTF-8 by now): no String made of them.
        if let udevMatch { return UdevMatch.run(bytes: UnsafeRawBufferPointer(udevMatch.bytes)) }
        Outlined.installSignals()
        var board = BoardUART.standard("not a UART")
        // Said once, when the port first opens (a port that cannot be opened is the one line then).
        var boardLine: String? = nil
        if case .serial(let uartPath, let baud, let flow) = spec {
            let (choice, line) = Outlined.decide(DeviceTree.current).overridden(baud: baud, flow: flow, port: uartPath)
            board = choice
            boardLine = line
        }

        var snoop: BTSnoopWriter? = nil
        if let btsnoop {
            do throws(TransportError) {
                snoop = try BTSnoopWriter(path: btsnoop.string)
            } catch {
                // The environment, not a bug: exit 2 as for a bad value (README "Exit codes").
                Log.error(error.description)
                return Exit.usage
            }
        }
        defer { snoop?.close() }
        // The role's counts, kept across sessions (a re-plug, a port reset); `up 0` when the process ends.
        let metrics = metricsFile.flatMap {
            controllerInfo ? nil : MetricsFile(path: $0.string, transport: transport.string, name: role == .central ? "" : name.string,
                                               role: role ?? .peripheral)
        }
        defer { metrics?.processEnds() }

        var configuration = HostConfiguration(role: role == .central ? .central : .peripheral)
        configuration.maxConnections = role == .central ? 1 : maxCentrals
        configuration.idleTimeout = UInt64((idleTimeout ?? 60) * 1000)
        if let connectionInterval { configuration.preferredParameters = try? parseConnectionInterval(connectionInterval) }
        if let address, let parsed = BDAddress(string: address.string, type: 1) {
            configuration.staticAddress = parsed
            configuration.forceRandomAddress = true
        } else {
            configuration.staticAddress = Outlined.derivedAddress(role: (role ?? .peripheral).name, name: name)
        }
        let session = makeSession(configuration: configuration)
        // A dead dongle's restarts, ever further apart (RecoveryLadder.swift).
        guard Outlined.backOff(transport) else { return stoppedExit }
        return serve(spec, board: board, boardLine: &boardLine, snoop: snoop, metrics: metrics, session: session)
    }

    /// One session per plug-in: after an unplug (USB, without --exit-on-unplug)
    /// wait for a matching dongle and resume the role without a restart. Apart
    /// from run(): what it is given is dropped once, there, not at each return here.
    @inline(never)
    func serve(_ spec: TransportSpec, board: BoardUART, boardLine: inout String?, snoop: BTSnoopWriter?, metrics: MetricsFile?,
               session: (Session) -> SessionEnd) -> Int32 {
        var sessions = 0
        var portReset = usbReset
        var rung: RecoveryRung? = nil
        var chipReset = false
        var reenumeratingUntil: UInt64? = nil
        while true {
            let opened: Transport
            do throws(TransportError) {
                opened = try openTransport(spec, reset: portReset, board: board)
            } catch {
                let now = monotonicMilliseconds()
                if rung != nil, portReset, spec.isUSB {
                    // The ladder's port reset made it re-enumerate (gone for a moment, or not yet
                    // answering its descriptor requests): open it again where it comes back.
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
                // SIGINT/SIGTERM ended the open (a connect still under way): a stop, not a failure.
                if Signals.stopReceived != 0 { return stoppedExit }
                Log.error(error.description)
                return error.isUnplug ? Exit.unplugged : Exit.transport
            }
            reenumeratingUntil = nil
            if let line = boardLine {
                Log.info(line)
                boardLine = nil
            }
            sessions += 1
            let setup = Outlined.setup(opened, given: firmwareDir != nil, reset: chipReset)
            let end = session(Session(transport: opened, snoop: snoop, number: sessions, setup: setup,
                                      firmwareDirectory: firmwareDir?.string ?? "/lib/firmware", metrics: metrics,
                                      startingRung: rung))
            if case .exit = end { opened.close() } else { opened.closeToReopen() }
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
            if code == Exit.controller { Outlined.recordSilentStart() }
            guard code == Exit.unplugged, spec.isUSB, !exitOnUnplug else { return code }
            Log.warning("dongle unplugged; waiting for it to come back (SIGINT/SIGTERM to stop)")
            guard USBController.waitForDevice(spec) else { return stoppedExit }
            Log.info("dongle is back; resuming as \((role ?? .peripheral).name)")
            // A dongle that has just enumerated may not answer at once (the kernel's
            // driver binds it, the machine is busy): opening it is retried for a while.
            reenumeratingUntil = monotonicMilliseconds() + RecoveryLadder.reenumerationWait
        }
    }

    /// Stopped by SIGINT/SIGTERM outside a session: the peripheral's 0, the
    /// central's 128 + the signal, as when a session is stopped (README "Exit codes").
    var stoppedExit: Int32 { role == .central && !controllerInfo ? Signals.stopExitCode ?? Exit.success : Exit.success }

    /// Builds what one transport session runs: the role's logic and the run loop.
    /// Not inlined into execute() (`Outlined`).
    @inline(never)
    func makeSession(configuration: HostConfiguration) -> (Session) -> SessionEnd {
        if controllerInfo {
            return { session in
                var loop = session.runLoop(configuration: configuration) { _ in RoleDispatch(InfoLogic()) }
                return loop.run()
            }
        }
        switch role ?? .peripheral {
        case .peripheral:
            let firstSeed = seed ?? randomUInt64()
            let style: AnswerStyle = answers == .text ? .text : .slug
            // The closure keeps these values, not a copy of every setting.
            return { [name, maxCentrals, answers, healthCheck] session in
                Log.info("peripheral \"\(name)\" on \(session.transport.description), answers as \(answers.name)s, up to \(maxCentrals) centrals")
                if let note = advertisedNameNote(name) { Log.info(note) }
                var loop = session.runLoop(configuration: configuration) { host in
                    // The 8-Ball's services are built into the one database the host keeps.
                    var nameBytes = Capacity.DeviceName()
                    _ = nameBytes.append(UnsafeRawBufferPointer(name.slice(0, min(name.count, Capacity.DeviceName.capacityCount)).bytes))
                    var logic: RoleDispatch? = nil
                    host.buildDatabase { database in
                        let ball = nameBytes.withBytes {
                            EightBallPeripheral(name: $0, style: style, seed: firstSeed &+ UInt64(session.number - 1), database: &database)
                        }
                        logic = RoleDispatch(PeripheralLogic(ball: ball, timed: session.metrics != nil))
                    }
                    return logic.take()!
                }
                loop.healthInterval = CommandLineSettings.healthCheckInterval(healthCheck, loop.notifier)
                return loop.run()
            }
        case .central:
            return centralSession(configuration: configuration)
        }
    }

    /// --health-check, or the systemd watchdog period when it is set.
    static func healthCheckInterval(_ healthCheck: Double?, _ notifier: SystemdNotifier?) -> UInt64? {
        if let healthCheck, healthCheck > 0 { return UInt64(healthCheck * 1000) }
        return notifier?.watchdogInterval
    }

    /// `board`: a UART's rate and flow control (`BoardUART`). Not inlined (`Outlined`).
    @inline(never)
    func openTransport(_ spec: TransportSpec, reset: Bool, board: BoardUART) throws(TransportError) -> Transport {
        switch spec {
        case .tcp(let host, let port):
            return try TCPTransport(host: host, port: port)
        case .serial(let path, let baud, _):
            return try SerialTransport(path: path, baud: baud, board: board, retry: reset)
        case .usbAny, .usbID, .usbPath:
            return try USBController.open(spec, reset: reset)
        }
    }
}

