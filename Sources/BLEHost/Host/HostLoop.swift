/// The one loop body of every board: the Linux run loop, the MCU firmware and
/// the benchmarks. Sans-IO: packets (or H4 bytes) and time in, packets out.
/// A board moves packets and tells time; the driver owns the
/// outgoing packet, the deadlines, stall and framing-loss detection and the
/// controller's set-up.
///
///     driver.start(now:)                       once
///     loop:
///       driver.check(now:)                     → state (ended? files wanted?)
///       while driver.nextOutgoing() { send driver.outgoing }
///       deadline = driver.nextDeadline()        after sending (a command arms a timer)
///       sleep until input or deadline
///       driver.receive(type:_:now:observer:)   per packet (USB)
///       driver.receive(stream:now:observer:)   per read (H4 over UART/TCP)
///       driver.service(now:waitedUntil: deadline, observer:)  timers, events, the application
public struct HostLoop<App: HostApplication & ~Copyable, Setup: ControllerSetup & ~Copyable>: ~Copyable {
    public var host: Host
    public var app: App
    public var setup: Setup
    public var settings: HostLoopSettings
    /// The packet `nextOutgoing` filled (H4: indicator byte first).
    public var outgoing = Capacity.HCIPacketStore()
    /// De-frames H4 streams (UART, TCP); USB hands whole packets.
    var deframer = H4Deframer()

    /// The loop's own small state, in one piece so a board can build it in place.
    var progress = DriverProgress()

    public var state: DriverState { progress.state }
    public var isStopping: Bool { progress.isStopping }
    /// The host reached ready at least once in this session.
    public var wasReady: Bool { progress.wasReady }
    /// H4 resynchronisations.
    public var framingResets: Int { progress.framingResets }
    /// Packets dropped before the host: a length that does not match the
    /// header, a type the host does not take.
    public var droppedPackets: Int { progress.droppedPackets }
    /// When input last arrived.
    public var lastInput: UInt64 { progress.lastInput }
    /// The recovery ladder's rung the controller is on (nil: it answers).
    public var recoveryRung: RecoveryRung? { progress.rung }
    /// When the controller last answered a command (Command Complete or
    /// Status), or the driver started: a watchdog pings only while this is recent.
    public var lastAnswer: UInt64 { progress.lastAnswer }

    public init(host: consuming Host, app: consuming App, setup: consuming Setup, settings: HostLoopSettings = HostLoopSettings()) {
        self.host = host
        self.app = app
        self.setup = setup
        self.settings = settings
    }

    /// Builds a driver in place, piece by piece (firmware: static memory). The
    /// host and the application are built where they live by `host` and `app`,
    /// never as temporaries on the stack.
    public static func initialize(
        _ driver: UnsafeMutablePointer<Self>, setup: consuming Setup, settings: HostLoopSettings,
        host: (UnsafeMutablePointer<Host>) -> Void, app: (UnsafeMutablePointer<App>, inout Host) -> Void
    ) {
        withUnsafeMutablePointer(to: &driver.pointee.host) { host($0) }
        withUnsafeMutablePointer(to: &driver.pointee.app) { app($0, &driver.pointee.host) }
        let setupHome = withUnsafeMutablePointer(to: &driver.pointee.setup) { $0 }
        setupHome.initialize(to: setup)
        withUnsafeMutablePointer(to: &driver.pointee.settings) { $0.initialize(to: settings) }
        withUnsafeMutablePointer(to: &driver.pointee.outgoing) { $0.initialize(to: Capacity.HCIPacketStore()) }
        withUnsafeMutablePointer(to: &driver.pointee.deframer) { $0.initialize(to: H4Deframer()) }
        withUnsafeMutablePointer(to: &driver.pointee.progress) { $0.initialize(to: DriverProgress()) }
    }

    // MARK: - Start and stop

    /// Begins the set-up, or the host's bring-up when there is none.
    public mutating func start(now: UInt64) {
        progress.lastInput = now
        progress.lastAnswer = now
        // A board that ends on a silent controller does not have it reset first.
        host.configuration.recoversController = !settings.endsOnSilentController
        progress.rung = settings.climbsRecoveryLadder ? settings.startingRung : nil
        // On a rung already: the next unanswered command goes to the board's next rung.
        if progress.rung != nil { host.configuration.recoversController = false }
        if let interval = settings.healthInterval { progress.nextHealthCheck = now + interval }
        progress.state = .settingUp
        progress.setupDeadline = now + settings.firstAnswerTimeout
        progress.setupAnswered = false
        follow(setup.begin(), now: now)
    }

    /// Stops in order: advertising and scanning off, links closed, controller reset.
    public mutating func stop(now: UInt64) {
        guard !progress.isStopping else { return }
        progress.isStopping = true
        progress.hardStop = now + settings.stopGrace
        if progress.state == .settingUp || progress.state == .needsFiles {
            progress.state = .finished(.stopped)
            return
        }
        host.shutdown(now: now)
    }

    /// Where the driver is at `now`: call before waiting for input.
    public mutating func check(now: UInt64) -> DriverState {
        switch progress.state {
        case .finished, .needsFiles:
            return progress.state
        case .settingUp:
            return checkSetUp(now: now)
        case .running:
            if host.isStopped {
                progress.state = .finished(.stopped)
                if progress.isStopping, !progress.setupShuttingDown { shutDownSetup(now: now) }
            } else if progress.isStopping, now >= progress.hardStop {
                progress.state = .finished(.stopTimedOut)
            } else if !progress.wasReady, !progress.isStopping, now >= progress.readyDeadline {
                progress.state = .finished(.notReady)
            } else if progress.wantsPortReset {
                progress.state = .finished(.portResetWanted)
            } else if progress.controllerWentSilent {
                progress.state = .finished(progress.wasReady ? .controllerSilent : .notReady)
            } else if !progress.isStopping, app.isFinished {
                stop(now: now)
            }
            return progress.state
        }
    }

    /// `check` while a set-up runs, apart: the loop checks a running driver on
    /// every wake-up, and the set-up's calls made that path heavier.
    @inline(never)
    mutating func checkSetUp(now: UInt64) -> DriverState {
        if now >= progress.setupResume {
            progress.setupResume = UInt64.max
            progress.setupDeadline = now + setup.answerTimeout
            follow(setup.resume(), now: now)
            return progress.state
        }
        if now >= progress.setupDeadline {
            // An unanswered shutdown step: the stop is done all the same.
            progress.state = progress.setupShuttingDown ? .finished(.stopped)
                : .finished(!progress.setupAnswered && settings.offersPortReset ? .portResetWanted : .setupSilent)
        }
        return progress.state
    }

    /// A clean stop's last step, the set-up's (MediaTek: Bluetooth off), run
    /// as a set-up step: its command out, its answer in, then `.stopped`.
    mutating func shutDownSetup(now: UInt64) {
        progress.setupShuttingDown = true
        progress.state = .settingUp
        progress.setupAnswered = true
        progress.setupDeadline = now + settings.setupShutdownTimeout
        follow(setup.shutdown(), now: now)
    }

    /// The set-up's files (after `.needsFiles`), kept alive by the caller until the set-up ends.
    public mutating func provideFiles(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer, now: UInt64) {
        guard progress.state == .needsFiles else { return }
        progress.state = .settingUp
        progress.setupDeadline = now + setup.answerTimeout
        follow(setup.provide(firmware: firmware, companion: companion), now: now)
    }

    mutating func follow(_ step: SetupStep, now: UInt64) {
        progress.setupResume = UInt64.max
        switch step {
        case .send: progress.setupCommandPending = true
        case .wait:
            let pause = setup.pause
            if pause > 0 { progress.setupResume = now + pause }
        case .needFiles: progress.state = .needsFiles
        case .failed where progress.setupShuttingDown, .done where progress.setupShuttingDown, .resetPort where progress.setupShuttingDown:
            progress.state = .finished(.stopped)
        case .failed: progress.state = .finished(.setupFailed)
        case .resetPort:
            // The board's port reset, on the ladder's rung for it (RecoveryRung).
            progress.rung = .portReset
            progress.state = .finished(.portResetWanted)
        case .done:
            progress.state = .running
            progress.readyDeadline = settings.readyTimeout.map { now + $0 } ?? UInt64.max
            host.start(now: now)
        }
    }

    // MARK: - Input

    /// One whole HCI packet (USB: a transfer's packet, where it lies). Out of
    /// line: a board's loop reaches it from several call sites (2 KB each on Linux).
    @inline(never)
    public mutating func receive<O: HostLoopObserver & ~Copyable>(
        type: UInt8, _ packet: UnsafeRawBufferPointer, now: UInt64, observer: inout O
    ) {
        progress.lastInput = now
        guard HCIPacketLength.isWhole(type: type, packet) else {
            progress.droppedPackets += 1
            return
        }
        observer.received(type: type, packet)
        if type == H4PacketType.event, packet[0] == HCIEventCode.commandComplete || packet[0] == HCIEventCode.commandStatus {
            progress.lastAnswer = now
        }
        switch progress.state {
        case .settingUp:
            guard type == H4PacketType.event else { return }
            progress.setupAnswered = true
            // The set-up handles the event first: it may change hands (the Realtek
            // probe to the Intel loader), and the next answer is timed by the new one.
            let step = setup.handle(event: packet)
            progress.setupDeadline = now + setup.answerTimeout
            follow(step, now: now)
        case .running:
            host.handlePacket(type: type, packet, now: now, delegate: &app)
            // The events now (the host's queue is bounded); the application's
            // poll once per pass, in `service`, after every packet of the wake-up.
            if host.hasEvents { processEvents(now: now, observer: &observer, polling: false) }
        case .needsFiles, .finished:
            break
        }
    }

    /// Bytes of an H4 stream (UART, TCP), cut into packets where they lie; a
    /// packet split across reads is finished in the de-framer. Bytes that are
    /// not HCI mean the framing is lost: the controller is reset.
    public mutating func receive<O: HostLoopObserver & ~Copyable>(
        stream bytes: UnsafeRawBufferPointer, now: UInt64, observer: inout O
    ) {
        progress.lastInput = now
        var offset = 0
        while true {
            let errors = deframer.framingErrors
            let frame = deframer.next(bytes, offset: &offset)
            if deframer.framingErrors != errors {
                // The rest of this read is suspect too.
                return framingLost(.notHCI(deframer.framingErrors - errors), now: now, observer: &observer)
            }
            // One call site: inlined at two, `receive(type:…)` doubled this function (1.6 KB of firmware flash).
            let type: UInt8, packet: UnsafeRawBufferPointer
            switch frame {
            case .none:
                return
            case .inPlace(let inPlaceType, let start, let length):
                (type, packet) = (inPlaceType, UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
            case .buffered(let bufferedType):
                // Gathered in the de-framer, handed over from its buffer: the bytes
                // stay there until its next use (the next read), which
                // `receive(type:…)` never reaches.
                (type, packet) = (bufferedType, deframer.withPacket { $0 })
            }
            receive(type: type, packet, now: now, observer: &observer)
        }
    }

    // MARK: - Timers and events

    /// Timers due at `now`, the events of the last input, the application's work.
    /// `waitedUntil` is what `nextDeadline` said before the board's wait
    /// (`.max` for nil), asked after the board's last send: no host timer is
    /// due before it, so a pass woken earlier by input skips them (asking the
    /// host again here cost 4.6% more instructions per question in the process
    /// bench, 2026-11-26). 0, the default: unknown, every timer is checked.
    public mutating func service<O: HostLoopObserver & ~Copyable>(now: UInt64, waitedUntil: UInt64 = 0, observer: inout O) {
        if deframer.isMidPacket, now >= progress.lastInput + settings.stallLimit {
            framingLost(.stalled, now: now, observer: &observer)
        }
        guard progress.state == .running else { return }
        // The host's timers only when one may be due: none is before the deadline
        // the board waited towards (a timer armed since, by input, was armed
        // from this wake-up's `now` or later, so falls later still).
        if now >= waitedUntil {
            host.tick(now: now)
        } else {
            host.setClock(now)
        }
        if let interval = settings.healthInterval, now >= progress.nextHealthCheck {
            progress.nextHealthCheck = now + interval
            host.probeController()
        }
        if let probe = scanProbeDeadline(), now >= probe {
            // A scan that hears nothing may mean a dead controller: ask it something.
            progress.nextScanProbe = now + settings.scanProbeInterval
            host.probeController()
        }
        processEvents(now: now, observer: &observer)
    }

    /// The earliest time `service` (or `check`) has work: ask it after
    /// sending, wait until it, and hand it to `service` as `waitedUntil`.
    public func nextDeadline() -> UInt64? {
        var first = UInt64.max
        if deframer.isMidPacket { first = min(first, progress.lastInput + settings.stallLimit) }
        switch progress.state {
        case .settingUp:
            first = min(first, min(progress.setupDeadline, progress.setupResume))
        case .running:
            if let d = host.nextDeadline() { first = min(first, d) }
            if let d = app.nextDeadline() { first = min(first, d) }
            if progress.isStopping { first = min(first, progress.hardStop) }
            if settings.healthInterval != nil { first = min(first, progress.nextHealthCheck) }
            // Work left by a pass that reached its bound, or an application
            // waiting for room that a sent PDU freed: due at once.
            if host.hasEvents || (host.transmitRoomFreed && app.isWaitingForRoom) { first = 0 }
            if !progress.wasReady { first = min(first, progress.readyDeadline) }
            if let probe = scanProbeDeadline() { first = min(first, probe) }
        case .needsFiles, .finished:
            break
        }
        return first == UInt64.max ? nil : first
    }

    /// While a central scans, a quiet transport is probed once a second.
    func scanProbeDeadline() -> UInt64? {
        guard host.configuration.role == .central, host.isScanning else { return nil }
        return max(progress.lastInput + settings.scanProbeInterval, progress.nextScanProbe)
    }

    /// A fresh de-framer and a reset controller, which advertises or scans again.
    mutating func framingLost<O: HostLoopObserver & ~Copyable>(_ why: FramingLoss, now: UInt64, observer: inout O) {
        progress.framingResets += 1
        observer.framingLost(why)
        deframer = H4Deframer()
        guard progress.state == .running else { return }
        host.resynchronize(now: now)
        processEvents(now: now, observer: &observer)
    }

    /// Lets the host and the application react; without `polling`, only the
    /// host's events are handed over. Bounded by construction: at most
    /// `pollRounds` polls and an event ring's worth of events per round, so a
    /// pass always returns to the board (signals, the watchdog, I/O); what is
    /// left makes `nextDeadline` due at once.
    mutating func processEvents<O: HostLoopObserver & ~Copyable>(now: UInt64, observer: inout O, polling: Bool = true) {
        if polling { host.transmitRoomFreed = false }
        // The usual pass (a packet with no event, a timer): the one poll, no loop.
        var polled = 0
        if !host.hasEvents {
            guard polling else { return }
            app.poll(host: &host, now: now)
            if !host.hasEvents { return }
            polled = 1
        }
        for _ in polled..<HostLoop.pollRounds {
            var budget = Capacity.EventRing.capacityCount
            while budget > 0, let event = host.nextEvent() {
                budget &-= 1  // > 0
                observer.observe(event, host: host)
                note(event)
                app.handle(event, host: &host, now: now)
            }
            guard polling else { return }
            app.poll(host: &host, now: now)
            if !host.hasEvents { return }
        }
    }

    /// Application polls per pass: its events usually need one more (an
    /// answer after a connection's events), never many.
    static var pollRounds: Int { 4 }

    mutating func note(_ event: HostEvent) {
        switch event {
        case .ready:
            progress.wasReady = true
            progress.rung = nil
            host.configuration.recoversController = !settings.endsOnSilentController
        case .controllerTimeout:
            guard !progress.isStopping else { break }
            if settings.climbsRecoveryLadder, progress.wasReady || progress.rung != nil {
                climb()
            } else if !progress.wasReady, settings.offersPortReset {
                // Not even bring-up was answered: a dongle that hangs after a warm start.
                progress.wantsPortReset = true
            } else if settings.endsOnSilentController {
                progress.controllerWentSilent = true
            }
        default:
            break
        }
    }

    /// One rung up the recovery ladder. The host resets the controller on the
    /// first (it recovers by itself); from then on it only reports, and the
    /// board carries out the next rung the driver's end asks for.
    mutating func climb() {
        let next: RecoveryRung = switch progress.rung {
        case nil: .hciReset
        case .hciReset: settings.offersPortResetRung ? .portReset : .exit
        case .portReset, .exit: .exit
        }
        progress.rung = next
        host.configuration.recoversController = false
        switch next {
        case .hciReset: break  // the host queued the reset with the timeout
        case .portReset: progress.wantsPortReset = true
        case .exit: progress.controllerWentSilent = true
        }
    }
}
