import CLinux
import BLEHost
import Chipsets

/// The Linux board: one path for every transport. The transport waits its
/// own way (`Transport.wait`: poll(2), or libusb's poll) for its input, the
/// signal pipe and one extra descriptor (the central's stdin), until the
/// driver's next deadline (no periodic wake-ups), then hands over what came. The loop's logic is the core's
/// `HostLoop`; this moves packets, tells time, reads firmware files and
/// turns how the driver ended into an exit code.
///
/// Steady state costs no allocation and one clock read per wake-up: a poll
/// set is rebuilt only when the transport's descriptors change, packets are
/// handed over where they lie, and the signal pipe is read only when a signal came.
struct RunLoop<Logic: RoleLogic & ~Copyable>: ~Copyable {
    /// The driver (host, role logic, set-up), built in place in a heap block of
    /// its own, once per session: built as a value, the host (tens of KB: its
    /// links' buffers, its events) was copied through three frames on the way
    /// home, and the stack pages those copies touched stayed resident
    /// (docs/PERFORMANCE.md, "Resident memory").
    let home: UnsafeMutablePointer<HostLoop<Logic, VendorSetup>>
    /// (A call that also hands over another of the loop's fields, `&observer`,
    /// goes through `home.pointee`: the accessor would claim the whole loop.)
    var driver: HostLoop<Logic, VendorSetup> {
        unsafeAddress { UnsafePointer(home) }
        nonmutating unsafeMutableAddress { home }
    }
    var observer: LinuxObserver
    let transport: Transport
    let notifier: SystemdNotifier?
    let started = monotonicMilliseconds()
    /// What the link was last told of the set-up's wishes (a fresh link: none).
    var linkWishes = SetupWishes()
    /// Another descriptor to wake up for (the central's stdin), -1 for none.
    var extraDescriptor: () -> Int32 = { -1 }
    /// Where a vendor set-up's files come from.
    var firmwareDirectory = "/lib/firmware"
    var files = VendorFiles()
    /// --metrics-file (it outlives the session), and when it and systemd's status line are next due.
    var metrics: MetricsFile?
    var nextReport: UInt64 = 0

    /// `build` makes the role's logic over the host, which is already built
    /// where it lives (its database empty: `build` fills it).
    init(configuration: HostConfiguration, transport: Transport, snoop: BTSnoopWriter?,
         setup: consuming VendorSetup = VendorSetup(plan: .none), readyTimeout: UInt64 = 10_000,
         startingRung: RecoveryRung? = nil, build: (inout Host) -> Logic) {
        var settings = HostLoopSettings()
        settings.readyTimeout = readyTimeout
        let recovery = transport.portRecovery
        settings.offersPortReset = recovery?.offersPortReset ?? false
        // The asker ends (exit 4) when its controller leaves a command unanswered;
        // the 8-Ball resets and re-initialises it and serves on.
        settings.endsOnSilentController = configuration.role == .central
        // The 8-Ball on USB climbs the recovery ladder (RecoveryLadder.swift);
        // over TCP or a UART, with no port to reset, the host resets it for ever.
        let canResetPort = recovery?.canResetPort ?? false
        settings.climbsRecoveryLadder = configuration.role == .peripheral && canResetPort
        settings.offersPortResetRung = canResetPort
        settings.startingRung = startingRung
        home = .allocate(capacity: 1)
        HostLoop.initialize(home, setup: setup, settings: settings,
                            host: { Host.initialize($0, configuration: configuration) },
                            app: { app, host in app.initialize(to: build(&host)) })
        self.transport = transport
        let notifier = SystemdNotifier()
        self.notifier = notifier
        observer = LinuxObserver(snoop: snoop, notifier: notifier, transport: transport)
    }

    deinit {
        files.free()
        home.deinitialize(count: 1)
        home.deallocate()
    }

    /// The role's logic (for what a session reads after the loop).
    var logic: Logic {
        _read { yield driver.app }
        _modify { yield &driver.app }
    }

    /// --health-check: probe the controller this often (ms) so a silent one is noticed.
    var healthInterval: UInt64? {
        get { driver.settings.healthInterval }
        set { driver.settings.healthInterval = newValue }
    }

    /// Runs until the role finishes, a signal stops it, or the transport fails.
    /// The pass is what each wake-up runs; start-up, the set-up's steps, the
    /// session's end and a failed transport are out of line (`begin`,
    /// `setupStep`, `transportFailed`): inlined here they made this the
    /// program's largest function.
    mutating func run() -> SessionEnd {
        defer { notifier?.close() }
        defer { endMetrics() }
        let transport = self.transport
        var now = monotonicMilliseconds()
        begin(now: now)
        do throws(TransportError) {
            while true {
                let state = driver.check(now: now)
                // Only a set-up step changes what it asks of the link: a running
                // host's pass asks nothing once its first (the set-up's end
                // reported) has handed the bulk endpoints back.
                switch state {
                case .running where files.reported: break
                default:
                    switch setupStep(state, now: now) {
                    case .pass: break
                    case .again: continue
                    case .end(let end): return end
                    }
                }
                try flush()
                // Asked after sending (a command arms its timeout); `service` is told it.
                let deadline = driver.nextDeadline() ?? UInt64.max
                // One path for every transport: it sleeps its own way.
                now = try transport.wait(until: nextWake(driver: deadline), now: now, signals: Signals.readFD, extra: extraDescriptor())
                RepeatedLines.flush(now: now)
                Signals.drain { handleSignal($0, now: now) }
                try transport.receive { hand($0, now: now) }
                notifier?.tick(now: now, answering: controllerAnswers(now: now))
                if now >= nextReport || observer.connectionsChanged { report(now: now) }
                home.pointee.service(now: now, waitedUntil: deadline, observer: &observer)
            }
        } catch {
            return transportFailed(error, now: now)
        }
    }

    /// The session's start: the clock for held lines, the metrics' probe, the driver.
    @inline(never)
    mutating func begin(now: UInt64) {
        RepeatedLines.now = now
        // itcb_dongle_controller_answering needs an answer now and then: with no
        // other probe (--health-check, the watchdog's), the metrics period's.
        if metrics != nil, driver.settings.healthInterval == nil { driver.settings.healthInterval = MetricsFile.period }
        driver.start(now: now)
    }

    /// What a pass does besides its steady work: anything but the running host's.
    enum SetupOutcome {
        case pass
        /// The files were handed over: the driver is checked again at once.
        case again
        case end(SessionEnd)
    }

    /// A pass before the host runs (a set-up step, its files), the pass that
    /// reports the set-up's end, or the driver's end.
    @inline(never)
    mutating func setupStep(_ state: DriverState, now: UInt64) -> SetupOutcome {
        followSetup(state)
        switch state {
        case .finished(let end):
            return .end(finish(end))
        case .needsFiles:
            guard files.read(for: driver.setup, directory: firmwareDirectory) else { return .end(.exit(Exit.controller)) }
            driver.provideFiles(firmware: files.firmware, companion: files.companion, now: now)
            return .again
        case .running:
            if !files.reported {
                metrics?.noteFirmware(driver.setup.describe())
                files.setupEnded(home.pointee.setup, &home.pointee.host.configuration)
            }
        case .settingUp:
            break
        }
        return .pass
    }

    /// The transport failed (or the controller went away): the session's end.
    @inline(never)
    mutating func transportFailed(_ error: TransportError, now: UInt64) -> SessionEnd {
        RepeatedLines.flush(now: now, everything: true)
        // The controller went away during shutdown, or with a stop signal not yet
        // read from the pipe (Ctrl-C reaches the whole foreground group: a
        // controller in it may close its socket first): a stop, not a failure.
        if driver.isStopping || Signals.stopReceived != 0 {
            return .exit(driver.app.exitCode ?? Exit.success)
        }
        if error.isUnplug {
            Log.warning(error.description)
            return .exit(Exit.unplugged)
        }
        Log.error(error.description)
        return .exit(Exit.transport)
    }

    /// One packet or byte run from the transport, to the driver.
    mutating func hand(_ input: TransportInput, now: UInt64) {
        switch input {
        case .packet(let type, let packet): home.pointee.receive(type: type, packet, now: now, observer: &observer)
        case .stream(let bytes): home.pointee.receive(stream: bytes, now: now, observer: &observer)
        }
    }

    /// How the driver ended, as the session's end (README "Exit codes"), with its log line.
    @inline(never)
    mutating func finish(_ end: HostLoopEnd) -> SessionEnd {
        // What a burst held back is said before the session's last words.
        RepeatedLines.flush(now: RepeatedLines.now, everything: true)
        if let next = ladderStep(end) { return next }
        // The controller's silences: one line naming it, each with its own ending.
        let silence: BuiltText
        switch end {
        case .stopped:
            return .exit(driver.app.exitCode ?? Exit.success)
        case .stopTimedOut:
            Log.warning("controller did not confirm shutdown in time; exiting")
            return .exit(driver.app.exitCode ?? Exit.success)
        case .notReady:
            silence = "did not complete initialisation (no answer to HCI commands)"
        case .controllerSilent:
            silence = "stopped answering HCI commands (no answer for \(formatNumber(Double(driver.host.configuration.commandTimeout) / 1000)) s); exiting"
        case .portResetWanted:
            metrics?.carried.recoveries[3] += 1  // the kind the session's own counts lack
            transport.portRecovery?.warnHungAfterWarmStart()
            return .reopenWithPortReset(ladder: false)
        case .setupFailed:
            files.logFailure(driver.setup)
            return .exit(Exit.controller)
        case .setupSilent:
            silence = "did not answer during \(VendorFiles.silentPhase(driver.setup))"
        }
        Log.error("controller at \(transport.description) \(silence)")
        return .exit(Exit.controller)
    }

    /// When the loop must run next without input: the driver's next deadline
    /// or the watchdog's, UInt64.max for none.
    func nextWake(driver deadline: UInt64) -> UInt64 {
        var first = deadline
        if let d = notifier?.deadline { first = min(first, d) }
        if let d = reportDeadline { first = min(first, d) }
        // A summary of held lines (none held: no wake-up).
        return min(first, RepeatedLines.limiter.deadline)
    }

    /// SIGHUP: the status line (log and systemd); SIGINT/SIGTERM: stop.
    /// Out of line and built as bytes (BuiltText): String joins inlined into
    /// `run` cost kilobytes.
    @inline(never)
    mutating func handleSignal(_ signal: Int32, now: UInt64) {
        switch signal {
        case SIGHUP:
            // Piece by piece into one builder: each `append("…\(n)…")` made
            // (and freed) a BuiltText of its own.
            var status = BuiltText.Builder()
            status.appendLiteral(driver.host.isReady ? "running: " : "initialising: ")
            status.appendInterpolation(driver.host.connectionCount)
            status.appendLiteral(" connection(s)")
            var peers = 0
            for slot in 0..<Host.connectionCapacity {
                guard let peer = driver.host.peer(slot: slot) else { continue }
                status.appendLiteral(peers == 0 ? " (" : ", ")
                status.appendInterpolation(peer.string)
                peers += 1
            }
            if peers > 0 { status.appendLiteral(")") }
            driver.app.appendStatusDetail(to: &status)
            status.appendLiteral(", uptime ")
            status.appendInterpolation(durationText(now - started))
            status.appendLiteral(", ")
            status.appendInterpolation(driver.host.recoveries)
            status.appendLiteral(" controller recoveries")
            if RecoveryLadder.portResets > 0 {
                status.appendLiteral(", ")
                status.appendInterpolation(RecoveryLadder.portResets)
                status.appendLiteral(" USB port resets")
            }
            let dropped = driver.host.droppedInput + driver.droppedPackets + transport.counts.droppedPackets
            status.appendLiteral(", ")
            status.appendInterpolation(dropped)
            status.appendLiteral(" inputs dropped")
            let text = BuiltText(status)
            Log.info("status: \(text)")
            notifier?.status(text)
        default:
            if driver.isStopping { return }
            Log.info("stopping (signal \(signal))")
            notifier?.send("STOPPING=1")
            driver.stop(now: now)
        }
    }

    /// Hands the set-up's wishes to the link when they changed, before anything
    /// more is sent (an exit line after a rate switch names the new rate).
    mutating func followSetup(_ state: DriverState) {
        let wished = SetupWishes(driver.setup.status, state: state)
        guard wished != linkWishes else { return }
        linkWishes = wished
        transport.setupLink?.follow(wished)
    }

    /// --log-level debug/trace: an outgoing packet's ATT narration and hex dump.
    @inline(never)
    func narrateOutgoing(_ raw: UnsafeRawBufferPointer) {
        if raw.first == H4PacketType.acl, let line = attNarration(UnsafeRawBufferPointer(rebasing: raw[1...]), outgoing: true) {
            Log.debug(line)
        }
        Log.trace("> \(hexDump(raw))")
    }

    /// Hands every packet the driver may send now to the transport, which
    /// sends them together (on the endpoints the set-up's wishes say).
    mutating func flush() throws(TransportError) {
        while transport.canSend, driver.nextOutgoing() {
            var failure: TransportError? = nil
            driver.outgoing.withBytes { raw in
                observer.snoop?.record(raw, received: false)
                if Log.level >= .debug { narrateOutgoing(raw) }
                do throws(TransportError) { try transport.send(raw) } catch { failure = error }
            }
            if let failure { throw failure }
        }
        try transport.flush()
    }
}

extension TransportError {
    var isUnplug: Bool {
        if case .unplugged = self { return true }
        return false
    }
}

/// "3d 04h05m06s", "04h05m06s" or "5m06s": uptime for status lines.
/// Piece by piece into one builder (a BuiltText per piece costs more code).
@inline(never)
func durationText(_ milliseconds: UInt64) -> BuiltText {
    let total = milliseconds / 1000
    let (days, hours, minutes, seconds) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60)
    var text = BuiltText.Builder(literalCapacity: 12, interpolationCount: 0)
    if days > 0 {
        text.appendInterpolation(days)
        text.appendLiteral("d ")
    }
    if days > 0 || hours > 0 { appendPart(hours, "h", padded: days > 0, to: &text) }
    appendPart(minutes, "m", padded: days > 0 || hours > 0, to: &text)
    appendPart(seconds, "s", padded: true, to: &text)
    return BuiltText(stringInterpolation: text)
}

/// `n` and its unit, two digits at least when `padded`.
@inline(never)
private func appendPart(_ n: UInt64, _ unit: StaticString, padded: Bool, to text: inout BuiltText.Builder) {
    if padded, n < 10 { text.appendLiteral("0") }
    text.appendInterpolation(n)
    text.appendLiteral(unit)
}
