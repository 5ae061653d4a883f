import Glibc
import BLEHost

/// What a role adds to the host: the GATT delegate, reactions to HostEvents,
/// periodic work and an exit code when it is done.
protocol RoleLogic: GATTServerDelegate, ~Copyable {
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64)
    /// Work after every input (send due notifications, next step of a session).
    mutating func poll(host: inout Host, now: UInt64)
    /// (Mutating like every accessor the loop calls each pass: a borrowed call
    /// on the non-copyable logic would copy it.)
    mutating func nextDeadline() -> UInt64?
    /// Set when the role finished by itself (central: all questions asked).
    var exitCode: Int32? { mutating get }
    /// The role's part of the SIGHUP status line ("12 question(s) answered").
    var statusDetail: String? { mutating get }
}

extension RoleLogic where Self: ~Copyable {
    var statusDetail: String? { mutating get { nil } }
}

/// Signals arrive through a self-pipe so the run loop sees them in poll(2).
enum Signals {
    nonisolated(unsafe) static var readFD: Int32 = -1
    nonisolated(unsafe) static var writeFD: Int32 = -1

    static func install() {
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
        let handler: @convention(c) (Int32) -> Void = { signal in
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = Glibc.write(Signals.writeFD, &byte, 1)
        }
        for s in [SIGINT, SIGTERM, SIGHUP] { signal(s, handler) }
        signal(SIGPIPE, SIG_IGN)
    }

    /// The next signal received, if any (read only when the pipe is readable).
    static func next() -> Int32? {
        var byte: UInt8 = 0
        return Glibc.read(readFD, &byte, 1) == 1 ? Int32(byte) : nil
    }
}

/// The single-threaded run loop: poll(2) over the transport and the signal pipe,
/// sleeping until input or the next deadline (no periodic wake-ups).
///
/// Steady state costs no allocation and few syscalls: the poll set is built once,
/// input is read into one buffer allocated at start and cut into packets where
/// it lies (H4Deframer.next), the signal pipe is read only when poll says so,
/// and the packets of a pass leave with one write per flush. Non-copyable, like
/// the host it owns; `host` and `logic` are passed inout together, which the
/// compiler checks (as a class, release builds trapped on a false access conflict).
struct RunLoop<Logic: RoleLogic & ~Copyable>: ~Copyable {
    var host: Host
    var logic: Logic
    let transport: Transport
    let snoop: BTSnoopWriter?
    var deframer = H4Deframer()
    var outgoing = HCIPacket()
    /// Where `host.nextEvent(into:)` puts each event (made once: a HostEvent is
    /// ~270 bytes, and building one is a copy of all of it).
    var eventSlot = HostEvent.shutdownComplete
    /// Bring-up must finish by then (a controller that never answers is an error).
    let readyDeadline: UInt64
    var wasReady = false
    var stopping = false
    var hardStop: UInt64 = 0
    let notifier: SystemdNotifier? = SystemdNotifier()
    /// --health-check: probe the controller this often (ms) so a silent one is noticed.
    var healthInterval: UInt64? = nil
    var nextHealthCheck: UInt64 = 0
    /// When input last arrived, and when the run loop started (for the status line).
    var lastInput: UInt64 = 0
    let started = monotonicMilliseconds()
    /// A central's scan is quiet this long: the controller is probed (it may be dead).
    static var scanProbeInterval: UInt64 { 1_000 }
    /// A packet begun but not finished for this long means the framing is lost.
    static var stallLimit: UInt64 { 1_000 }
    var nextScanProbe: UInt64 = 0
    /// The controller never answered during bring-up and a USB port reset may help.
    var wantsPortReset = false
    /// Another descriptor to wake up for (the central's stdin), -1 for none.
    var extraDescriptor: () -> Int32 = { -1 }
    /// Input buffer, allocated once per session.
    let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)

    init(host: consuming Host, logic: consuming Logic, transport: Transport, snoop: BTSnoopWriter?, readyTimeout: UInt64 = 10_000) {
        self.host = host
        self.logic = logic
        self.transport = transport
        self.snoop = snoop
        readyDeadline = monotonicMilliseconds() + readyTimeout
    }

    deinit { input.deallocate() }

    /// Runs until the role finishes, a signal stops it, or the transport fails.
    mutating func run() -> Int32 {
        defer { notifier?.close() }
        host.start(now: monotonicMilliseconds())
        if let healthInterval { nextHealthCheck = monotonicMilliseconds() + healthInterval }
        // The poll set, built once: the transport's descriptors, the extra one, the signal pipe.
        var fds = transport.pollDescriptors
        let transportCount = fds.count
        fds.append(pollfd(fd: -1, events: Int16(POLLIN), revents: 0))
        fds.append(pollfd(fd: Signals.readFD, events: Int16(POLLIN), revents: 0))
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
                if wantsPortReset {
                    transport.warnHungAfterWarmStart()
                    return Exit.retryWithPortReset
                }
                if !stopping, logic.exitCode != nil {
                    beginStop(now: now)
                    try flush()
                }
                fds[transportCount].fd = extraDescriptor()
                let timeout = pollTimeout(now: now)
                let n = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
                if n < 0, errno != EINTR { throw .lost("poll failed: \(errnoString())") }
                if n > 0, fds[transportCount + 1].revents != 0 {
                    while let signal = Signals.next() { handleSignal(signal) }
                }
                try fds.withUnsafeMutableBufferPointer { (all) throws(TransportError) in
                    let ready = UnsafeMutableBufferPointer(rebasing: all[0..<transportCount])
                    while true {
                        let count = try transport.read(into: input, ready: ready)
                        if count > 0 { feed(count) }
                        if count < input.count { break }
                    }
                }
                let after = monotonicMilliseconds()
                if deframer.isMidPacket, after >= lastInput + RunLoop.stallLimit {
                    framingLost("a packet began and never finished", now: after)
                }
                host.tick(now: after)
                notifier?.tick(now: after)
                if let healthInterval, after >= nextHealthCheck {
                    nextHealthCheck = after + healthInterval
                    host.probeController()
                }
                if let probe = scanProbeDeadline(), after >= probe {
                    // A scan that hears nothing may mean a dead controller: ask it something.
                    nextScanProbe = after + RunLoop.scanProbeInterval
                    host.probeController()
                }
                if n > 0, fds[transportCount].revents != 0 { processEvents() }
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

    /// While a central scans, a quiet transport is probed once a second.
    mutating func scanProbeDeadline() -> UInt64? {
        guard host.configuration.role == .central, host.isScanning else { return nil }
        return max(lastInput + RunLoop.scanProbeInterval, nextScanProbe)
    }

    /// The H4 stream lost its framing (noise on a UART, garbage on a socket): a
    /// de-framer that guesses on would swallow every packet after it, so start
    /// over: a fresh de-framer and a reset controller, which advertises again.
    mutating func framingLost(_ why: String, now: UInt64) {
        Log.warning("H4 stream from \(transport.description) out of sync (\(why)); resetting the controller")
        deframer = H4Deframer()
        host.resynchronize(now: now)
        processEvents()
    }

    mutating func pollTimeout(now: UInt64) -> Int32 {
        var first = UInt64.max
        if let d = host.nextDeadline() { first = min(first, d) }
        if let d = logic.nextDeadline() { first = min(first, d) }
        if stopping { first = min(first, hardStop) }
        if let d = notifier?.deadline { first = min(first, d) }
        if healthInterval != nil { first = min(first, nextHealthCheck) }
        if !wasReady { first = min(first, readyDeadline) }
        if deframer.isMidPacket { first = min(first, lastInput + RunLoop.stallLimit) }
        if let probe = scanProbeDeadline() { first = min(first, probe) }
        var timeout: Int32 = -1
        if first != UInt64.max {
            timeout = first <= now ? 0 : Int32(min(first - now, 60_000))
        }
        if let hint = transport.timeoutHint { timeout = timeout < 0 ? hint : min(timeout, hint) }
        return timeout
    }

    mutating func handleSignal(_ signal: Int32) {
        switch signal {
        case SIGHUP:
            var peers: [String] = []
            for slot in 0..<Host.connectionCapacity {
                if let peer = host.peer(slot: slot) { peers.append(peer.string) }
            }
            var parts = ["\(host.connectionCount) connection(s)" + (peers.isEmpty ? "" : " (" + peers.joined(separator: ", ") + ")")]
            if let detail = logic.statusDetail { parts.append(detail) }
            parts.append("uptime \(durationText(monotonicMilliseconds() - started))")
            parts.append("\(host.recoveries) controller recoveries")
            parts.append("\(host.droppedInput) inputs dropped")
            let status = "\(host.isReady ? "running" : "initialising"): " + parts.joined(separator: ", ")
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

    /// Cuts the first `count` bytes of `input` into packets and handles each
    /// where it lies (a packet split across reads comes from the de-framer).
    mutating func feed(_ count: Int) {
        let bytes = UnsafeRawBufferPointer(rebasing: input[0..<count])
        lastInput = monotonicMilliseconds()
        var offset = 0
        while true {
            let errors = deframer.framingErrors
            let frame = deframer.next(bytes, offset: &offset)
            if deframer.framingErrors != errors {
                // Unknown packet type or an impossible length: the rest of this read is suspect too.
                return framingLost("\(deframer.framingErrors - errors) byte(s) or packet(s) that are not HCI", now: lastInput)
            }
            switch frame {
            case .none:
                return
            case .inPlace(let type, let start, let length):
                handle(type, UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
            case .buffered(let type):
                // Rare (a packet split across reads): one copy, so the handlers never
                // run while the de-framer is borrowed.
                var packet = FixedBytes<1028>()
                _ = deframer.withPacket { packet.append($0) }
                packet.withBytes { handle(type, $0) }
            }
        }
    }

    mutating func handle(_ type: UInt8, _ packet: UnsafeRawBufferPointer) {
        snoop?.record(type, packet, received: true)
        if Log.level >= .debug {
            if type == H4PacketType.acl, let line = attNarration(packet, outgoing: false) { Log.debug(line) }
            Log.trace("< \(hex(type)) \(hexDump(packet))")
        }
        host.handlePacket(type: type, packet, now: monotonicMilliseconds(), delegate: &logic)
        processEvents()
    }

    /// Lets the host and the role react until neither has anything more to say.
    mutating func processEvents() {
        let now = monotonicMilliseconds()
        while true {
            var progressed = false
            while host.nextEvent(into: &eventSlot) {
                let event = eventSlot  // one copy, lent to each consumer below
                progressed = true
                logHostEvent(event)
                notifier?.observe(event, host: &host, role: host.configuration.role)
                if case .ready = event { wasReady = true }
                if case .controllerTimeout = event, !wasReady, !stopping, transport.offersPortReset { wantsPortReset = true }
                logic.handle(event, host: &host, now: now)
            }
            logic.poll(host: &host, now: now)
            if !host.hasEvents && !progressed { break }
        }
    }

    /// Hands every packet the host may send now to the transport, which sends
    /// them together.
    mutating func flush() throws(TransportError) {
        processEvents()
        while host.nextOutgoing(into: &outgoing) {
            var failure: TransportError? = nil
            outgoing.withBytes { raw in
                snoop?.record(raw, received: false)
                if Log.level >= .debug {
                    if raw.first == H4PacketType.acl, let line = attNarration(UnsafeRawBufferPointer(rebasing: raw[1...]), outgoing: true) {
                        Log.debug(line)
                    }
                    Log.trace("> \(hexDump(raw))")
                }
                do throws(TransportError) { try transport.write(raw) } catch { failure = error }
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
func durationText(_ milliseconds: UInt64) -> String {
    let total = milliseconds / 1000
    let (days, hours, minutes, seconds) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60)
    func two(_ n: UInt64) -> String { n < 10 ? "0\(n)" : "\(n)" }
    if days > 0 { return "\(days)d \(two(hours))h\(two(minutes))m\(two(seconds))s" }
    if hours > 0 { return "\(hours)h\(two(minutes))m\(two(seconds))s" }
    return "\(minutes)m\(two(seconds))s"
}
