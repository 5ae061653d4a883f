import CLinux
import BLEHost
import Chipsets

/// Signals arrive through a self-pipe so the run loop sees them in poll(2).
/// The first SIGINT/SIGTERM is also kept: the central exits 130/143 and does
/// not print a made-up outcome for the question it was stopped in.
///
/// When the USB transport sleeps inside libusb's own poll instead (nothing
/// else to watch), the handler also writes libusb's internal eventfd, which
/// is always in that poll set and which libusb clears when no event of its own
/// is pending; `arrived` tells the loop to read the pipe without a syscall per wake-up.
enum Signals {
    nonisolated(unsafe) static var readFD: Int32 = -1
    nonisolated(unsafe) static var writeFD: Int32 = -1
    nonisolated(unsafe) static var stopReceived: Int32 = 0
    /// Set by the handler before it writes; cleared by the loop before it reads the pipe.
    nonisolated(unsafe) static var arrived = false
    /// An eventfd to wake as well (libusb's), -1 for none.
    nonisolated(unsafe) static var wakeFD: Int32 = -1

    static func install() {
        // The two ends on the stack (an array for them was an allocation and its code).
        var fds: (Int32, Int32) = (0, 0)
        withUnsafeMutableBytes(of: &fds) { raw in
            let ends = raw.baseAddress!.assumingMemoryBound(to: Int32.self)
            _ = pipe(ends)
            for i in 0..<2 {
                _ = fcntl(ends[i], F_SETFL, fcntl(ends[i], F_GETFL) | O_NONBLOCK)
                _ = fcntl(ends[i], F_SETFD, FD_CLOEXEC)
            }
        }
        readFD = fds.0
        writeFD = fds.1
        let handler: @convention(c) (Int32) -> Void = { signal in
            if signal != SIGHUP, Signals.stopReceived == 0 { Signals.stopReceived = signal }
            Signals.arrived = true
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = sysWrite(Signals.writeFD, &byte, 1)
            if Signals.wakeFD >= 0 {
                var one: UInt64 = 1
                _ = sysWrite(Signals.wakeFD, &one, 8)
            }
        }
        // Without SA_RESTART: a blocking call the program still makes returns
        // EINTR and the stop is seen, instead of waiting for the call's own end.
        _ = clinux_catch_signal(SIGINT, handler)
        _ = clinux_catch_signal(SIGTERM, handler)
        _ = clinux_catch_signal(SIGHUP, handler)
        clinux_ignore_signal(SIGPIPE)
    }

    /// Every signal received since the last call, to `handle` (the pipe is read
    /// only when the handler said something arrived).
    static func drain(_ handle: (Int32) -> Void) {
        guard arrived else { return }
        arrived = false
        while let signal = next() { handle(signal) }
    }

    /// The next signal received, if any (read only when the pipe is readable).
    static func next() -> Int32? {
        var byte: UInt8 = 0
        return sysRead(readFD, &byte, 1) == 1 ? Int32(byte) : nil
    }

    /// How a wait outside the run loop ended.
    enum Wake { case stop, ready, timedOut }

    /// Sleeps in poll(2) up to `milliseconds` on the signal pipe and on `fd`
    /// (-1: none) for `events`: .stop once SIGINT/SIGTERM came (SIGHUP is read
    /// and passed over), .ready when `fd` is, else .timedOut. For the waits
    /// before and between sessions, which must end at a stop as the run loop does.
    static func sleep(_ milliseconds: Int32, watching fd: Int32 = -1, for events: Int32 = POLLIN) -> Wake {
        var fds = (pollfd(fd: readFD, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(events), revents: 0))
        let n = withUnsafeMutableBytes(of: &fds) { poll($0.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, milliseconds) }
        while let signal = next() { if signal != SIGHUP { return .stop } }
        return n > 0 && fds.1.revents != 0 ? .ready : .timedOut
    }

    /// 128 + the stop signal's number, the shell's convention; nil when none arrived.
    static var stopExitCode: Int32? { stopReceived == 0 ? nil : 128 + stopReceived }
}
