import CLinux
import BLEHost

/// The lines a peer or a noisy line can repeat without end: an H4 stream out
/// of sync and the recovery it starts ("controller ready", "advertising"), a
/// dropped link, a refused connection or connection parameters, a stalled
/// USB endpoint, a recovery's second step. (A refused SMP packet, a dropped request and a full queue are
/// already held back in the core, once a minute: `RepeatedLine`.)
enum RepeatKind: UInt8 {
    case framingLoss, controllerReady, advertising, controllerReset, linkDropped, connectionRefused,
         connectionFailed, parametersRefused, commandFailed, advertisingRefused, bufferOverflow, usbStall, recoveryStep,
         chipPortReset

    /// What the summary of a burst names.
    var label: StaticString {
        switch self {
        case .framingLoss: "H4 stream out of sync, controller reset"
        case .controllerReady: "controller ready"
        case .advertising: "advertising"
        case .controllerReset: "controller reset after a timeout or hardware error"
        case .linkDropped: "link dropped for a controller reset"
        case .connectionRefused: "connection refused at --max-centrals"
        case .connectionFailed: "connection failed"
        case .parametersRefused: "connection parameters refused"
        case .commandFailed: "HCI command failed"
        case .advertisingRefused: "controller cannot advertise while connected"
        case .bufferOverflow: "controller data buffer overflow"
        case .usbStall: "USB endpoint stalled"
        case .recoveryStep: "controller reset, recovery step 2"
        case .chipPortReset: "USB port reset after the chip's own reset, recovery step 2"
        }
    }

    /// What the link, connection, command or endpoint a summary is about is
    /// ("connection": " (connection 0x2a)"); nil when one per process.
    var subject: StaticString? {
        switch self {
        case .linkDropped, .parametersRefused: "connection"
        case .commandFailed: "command"
        case .usbStall: "endpoint"
        default: nil
        }
    }
}

/// One kind of line for one link or connection (`key`), in or out of a burst.
struct LineBurst {
    var kind: RepeatKind? = nil
    var key: UInt16 = 0
    var level = LogLevel.info
    /// The last occurrence, and the last line written (the first of the burst or a summary).
    var last: UInt64 = 0
    var lastLine: UInt64 = 0
    /// Occurrences held back since `lastLine`.
    var held = 0

    var quietSince: UInt64 { max(last, lastLine) }

    /// When the held ones are to be summed up: after `gap` of quiet, or
    /// `period` after the last line while the burst goes on.
    var due: UInt64 {
        held == 0 ? UInt64.max : min(quietSince + LineLimiter.gap, lastLine + LineLimiter.period)
    }
}

/// At most one line per kind per second per link: the first of a burst is
/// written at once, the ones after it (each within `gap` of the one before, or
/// of the last line) are counted, and one summary line says how many when the
/// burst ends, or every `period` while it lasts ("… 58 more in the last 10 s").
/// A line outside a burst is written as ever. A fixed table, no allocation;
/// the time is the run loop's (ms). `deadline` is when a summary is due
/// (`UInt64.max`: nothing held, no wake-up).
struct LineLimiter {
    static let gap: UInt64 = 1_000
    static let period: UInt64 = 10_000
    static let slots = 16

    var bursts = Capacity.LineBursts<LineBurst>(repeating: LineBurst())
    private(set) var deadline = UInt64.max

    /// Whether the line of `kind` for `key` is written now; when it is not, it is counted.
    /// `summary` receives the line of a burst that ended before this one.
    mutating func admit(_ kind: RepeatKind, key: UInt16, level: LogLevel, now: UInt64,
                        summary: (LogLevel, BuiltText) -> Void) -> Bool {
        var slot = 0
        var found = false
        for i in 0..<LineLimiter.slots where bursts[i].kind == kind && bursts[i].key == key {
            slot = i
            found = true
        }
        if found, now < bursts[slot].quietSince + LineLimiter.gap {
            bursts[slot].held += 1
            bursts[slot].last = now
            updateDeadline()
            return false
        }
        if !found {
            // A free slot, else the one quiet the longest (its held ones said first).
            for i in 0..<LineLimiter.slots {
                if bursts[i].kind == nil {
                    slot = i
                    break
                }
                if bursts[i].quietSince < bursts[slot].quietSince { slot = i }
            }
        }
        sumUp(slot, now: now, summary)
        bursts[slot] = LineBurst(kind: kind, key: key, level: level, last: now, lastLine: now, held: 0)
        updateDeadline()
        return true
    }

    /// The summaries due at `now` (all of them with `everything`).
    mutating func flush(now: UInt64, everything: Bool = false, _ summary: (LogLevel, BuiltText) -> Void) {
        guard everything || now >= deadline else { return }
        for i in 0..<LineLimiter.slots where everything || now >= bursts[i].due {
            sumUp(i, now: now, summary)
        }
        updateDeadline()
    }

    @inline(never)
    private mutating func sumUp(_ slot: Int, now: UInt64, _ summary: (LogLevel, BuiltText) -> Void) {
        let burst = bursts[slot]
        guard let kind = burst.kind, burst.held > 0 else { return }
        let seconds = (max(now, burst.last) - burst.lastLine + 999) / 1000
        // Built as bytes, a piece at a time in one builder.
        var text = BuiltText.Builder()
        text.appendInterpolation(kind.label)
        if let subject = kind.subject {
            text.appendLiteral(" (")
            text.appendInterpolation(subject)
            text.appendLiteral(" 0x")
            text.appendHex(UInt64(burst.key))
            text.appendLiteral(")")
        }
        text.appendLiteral(": ")
        text.appendInterpolation(burst.held)
        text.appendLiteral(" more in the last ")
        text.appendInterpolation(Int(max(seconds, 1)))
        text.appendLiteral(" s (at most one line a second)")
        summary(burst.level, BuiltText(text))
        bursts[slot].held = 0
        bursts[slot].lastLine = now
    }

    private mutating func updateDeadline() {
        deadline = UInt64.max
        for i in 0..<LineLimiter.slots { deadline = min(deadline, bursts[i].due) }
    }
}

/// The process's limiter (it outlives a session: a port reset or a reopened
/// port goes on with the same burst) and the run loop's clock, set at each wake-up.
enum RepeatedLines {
    nonisolated(unsafe) static var limiter = LineLimiter()
    nonisolated(unsafe) static var now: UInt64 = 0

    /// Whether a line of `kind` at `level` is written now (the summary of an ended burst first).
    static func admit(_ kind: RepeatKind, key: UInt16 = 0, level: LogLevel) -> Bool {
        limiter.admit(kind, key: key, level: level, now: now, summary: { Log.emit($0, $1) })
    }

    /// At the run loop's wake-up: the summaries due (`everything`: at the session's end).
    static func flush(now: UInt64, everything: Bool = false) {
        self.now = now
        limiter.flush(now: now, everything: everything) { Log.emit($0, $1) }
    }
}

extension Log {
    /// A line a peer or a noisy line can repeat: written unless it is part of a burst (`LineLimiter`).
    /// The message is a BuiltText (Log.write).
    @inline(__always)
    static func repeated(_ kind: RepeatKind, key: UInt16 = 0, _ level: LogLevel, _ message: @autoclosure () -> BuiltText) {
        guard level <= Log.level, RepeatedLines.admit(kind, key: key, level: level) else { return }
        emit(level, message())
    }
}

extension HostEvent {
    /// The kind and link of a line a peer or a noisy line can repeat; nil for the others.
    var repeatKind: (kind: RepeatKind, key: UInt16)? {
        switch self {
        case .ready: (.controllerReady, 0)
        case .advertising(true): (.advertising, 0)
        case .controllerTimeout, .hardwareError: (.controllerReset, 0)
        case .disconnected(let handle, nil): (.linkDropped, handle)
        case .connectionRejected: (.connectionRefused, 0)
        case .connectionFailed: (.connectionFailed, 0)
        case .connectionParametersRefused(let handle): (.parametersRefused, handle)
        case .commandFailed(let opcode, _): (.commandFailed, opcode)
        case .advertisingWhileConnectedUnsupported: (.advertisingRefused, 0)
        case .dataBufferOverflow: (.bufferOverflow, 0)
        default: nil
        }
    }
}
