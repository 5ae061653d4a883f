import Glibc
import BLEHost

/// What a role adds to the host: the GATT delegate, reactions to HostEvents,
/// periodic work and an exit code when it is done.
protocol RoleLogic: GATTServerDelegate {
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64)
    /// Work after every input (send due notifications, next step of a session).
    mutating func poll(host: inout Host, now: UInt64)
    func nextDeadline() -> UInt64?
    /// Set when the role finished by itself (central: all questions asked).
    var exitCode: Int32? { get }
}

/// Signals arrive through a self-pipe so the run loop sees them in poll(2).
enum Signals {
    nonisolated(unsafe) static var pipeFDs: [Int32] = [-1, -1]

    static func install() {
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        pipeFDs = fds
        let handler: @convention(c) (Int32) -> Void = { signal in
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = Glibc.write(Signals.pipeFDs[1], &byte, 1)
        }
        for s in [SIGINT, SIGTERM, SIGHUP] { signal(s, handler) }
        signal(SIGPIPE, SIG_IGN)
    }

    /// Signals received since the last call.
    static func drain() -> [Int32] {
        var result: [Int32] = []
        var byte: UInt8 = 0
        while Glibc.read(pipeFDs[0], &byte, 1) == 1 { result.append(Int32(byte)) }
        return result
    }
}

/// The single-threaded run loop: poll(2) over the transport and the signal pipe,
/// sleeping until input or the next deadline (no periodic wake-ups).
/// A struct, so that passing `host` and `logic` inout together is checked at
/// compile time (as a class, release builds trapped on a false access conflict).
struct RunLoop<Logic: RoleLogic> {
    var host: Host
    var logic: Logic
    let transport: Transport
    let snoop: BTSnoopWriter?
    var deframer = H4Deframer()
    var outgoing = HCIPacket()
    /// Bring-up must finish by then (a controller that never answers is an error).
    let readyDeadline: UInt64
    var wasReady = false
    var stopping = false
    var hardStop: UInt64 = 0
    let notifier: SystemdNotifier? = SystemdNotifier()
    /// --health-check: probe the controller this often (ms) so a silent one is noticed.
    var healthInterval: UInt64? = nil
    var nextHealthCheck: UInt64 = 0
    /// More descriptors to wake up for (the central's stdin).
    var extraDescriptors: () -> [pollfd] = { [] }

    init(host: Host, logic: Logic, transport: Transport, snoop: BTSnoopWriter?, readyTimeout: UInt64 = 10_000) {
        self.host = host
        self.logic = logic
        self.transport = transport
        self.snoop = snoop
        readyDeadline = monotonicMilliseconds() + readyTimeout
    }

    /// Runs until the role finishes, a signal stops it, or the transport fails.
    mutating func run() -> Int32 {
        defer { notifier?.close() }
        host.start(now: monotonicMilliseconds())
        if let healthInterval { nextHealthCheck = monotonicMilliseconds() + healthInterval }
        do throws(TransportError) {
            try flush()
            while true {
                let now = monotonicMilliseconds()
                if host.isStopped { return logic.exitCode ?? Exit.success }
                if stopping, now >= hardStop {
                    Log.warning("controller did not confirm shutdown in time; exiting")
                    return logic.exitCode ?? Exit.success
                }
                if !wasReady, !stopping, now >= readyDeadline {
                    Log.error("controller at \(transport.description) did not complete initialisation (no answer to HCI commands)")
                    return Exit.controller
                }
                if !stopping, logic.exitCode != nil {
                    beginStop(now: now)
                    try flush()
                }
                let transportCount = transport.pollDescriptors.count
                var fds = transport.pollDescriptors
                fds += extraDescriptors()
                fds.append(pollfd(fd: Signals.pipeFDs[0], events: Int16(POLLIN), revents: 0))
                let timeout = pollTimeout(now: now)
                let n = poll(&fds, nfds_t(fds.count), timeout)
                if n < 0, errno != EINTR { throw .lost("poll failed: \(errnoString())") }
                for signal in Signals.drain() { handleSignal(signal) }
                let bytes = try transport.readAvailable(Array(fds.prefix(transportCount)))
                if !bytes.isEmpty { feed(bytes) }
                let after = monotonicMilliseconds()
                host.tick(now: after)
                notifier?.tick(now: after)
                if let healthInterval, after >= nextHealthCheck {
                    nextHealthCheck = after + healthInterval
                    host.probeController()
                }
                if fds.dropFirst(transportCount).dropLast().contains(where: { $0.revents != 0 }) { processEvents() }
                try flush()
            }
        } catch {
            if stopping {
                // The controller went away during shutdown: nothing left to tidy.
                return logic.exitCode ?? Exit.success
            }
            if error.isUnplug {
                Log.warning(error.description)
                return Exit.unplugged
            }
            Log.error(error.description)
            return Exit.transport
        }
    }

    func pollTimeout(now: UInt64) -> Int32 {
        var deadlines: [UInt64] = []
        if let d = host.nextDeadline() { deadlines.append(d) }
        if let d = logic.nextDeadline() { deadlines.append(d) }
        if stopping { deadlines.append(hardStop) }
        if let d = notifier?.deadline { deadlines.append(d) }
        if healthInterval != nil { deadlines.append(nextHealthCheck) }
        if !wasReady { deadlines.append(readyDeadline) }
        var timeout: Int32 = -1
        if let first = deadlines.min() {
            timeout = first <= now ? 0 : Int32(min(first - now, 60_000))
        }
        if let hint = transport.timeoutHint { timeout = timeout < 0 ? hint : min(timeout, hint) }
        return timeout
    }

    mutating func handleSignal(_ signal: Int32) {
        switch signal {
        case SIGHUP:
            let status = "\(host.isReady ? "running" : "initialising"): \(host.connectionCount) connection(s), \(host.recoveries) controller recoveries, \(host.droppedInput) inputs dropped"
            Log.info("status: " + status)
            notifier?.status(status)
        default:
            if stopping { return }
            Log.info("stopping (signal \(signal))")
            beginStop(now: monotonicMilliseconds())
        }
    }

    /// Advertising/scanning off, links closed, controller reset; at most 2 s.
    mutating func beginStop(now: UInt64) {
        notifier?.send("STOPPING=1")
        stopping = true
        hardStop = now + 2_000
        host.shutdown(now: now)
    }

    mutating func feed(_ bytes: [UInt8]) {
        // Cut the stream first, then handle each packet: no closure runs while
        // the de-framer is being mutated (the handlers may start more I/O).
        var packets: [(UInt8, [UInt8])] = []
        bytes.withUnsafeBytes { raw in
            deframer.push(raw) { type, packet in packets.append((type, Array(packet))) }
        }
        for (type, packet) in packets {
            if let snoop {
                ([type] + packet).withUnsafeBytes { snoop.record($0, received: true) }
            }
            Log.trace("< \(hex(type)) \(packet.withUnsafeBytes { hexDump($0) })")
            packet.withUnsafeBytes { host.handlePacket(type: type, $0, now: monotonicMilliseconds(), delegate: &logic) }
            processEvents()
        }
    }

    /// Lets the host and the role react until neither has anything more to say.
    mutating func processEvents() {
        let now = monotonicMilliseconds()
        while true {
            var progressed = false
            while let event = host.nextEvent() {
                progressed = true
                logHostEvent(event)
                notifier?.observe(event, host: host, role: host.configuration.role)
                if case .ready = event { wasReady = true }
                logic.handle(event, host: &host, now: now)
            }
            logic.poll(host: &host, now: now)
            if !host.hasEvents && !progressed { break }
        }
    }

    mutating func flush() throws(TransportError) {
        processEvents()
        while host.nextOutgoing(into: &outgoing) {
            let packet = outgoing.array
            var failure: TransportError? = nil
            packet.withUnsafeBytes { raw in
                snoop?.record(raw, received: false)
                Log.trace("> \(hexDump(raw))")
                do throws(TransportError) { try transport.write(raw) } catch { failure = error }
            }
            if let failure { throw failure }
        }
    }
}

extension TransportError {
    var isUnplug: Bool {
        if case .unplugged = self { return true }
        return false
    }
}
