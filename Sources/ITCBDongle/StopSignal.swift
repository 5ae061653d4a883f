import Glibc

/// Which stop signal (SIGINT/SIGTERM) arrived, for the central's exit code
/// (130 on Ctrl-C, 143 on SIGTERM) and to keep it from printing a made-up
/// outcome for the question it was stopped in. Installed after
/// `Signals.install()`: the handler records the signal and then does what that
/// one does (one byte into the run loop's self-pipe), so the run loop is unchanged.
enum StopSignal {
    nonisolated(unsafe) static var received: Int32 = 0

    static func install() {
        let handler: @convention(c) (Int32) -> Void = { signal in
            if StopSignal.received == 0 { StopSignal.received = signal }
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = Glibc.write(Signals.writeFD, &byte, 1)
        }
        for s in [SIGINT, SIGTERM] { signal(s, handler) }
    }

    /// 128 + the signal number, the shell's convention; nil when none arrived.
    static var exitCode: Int32? { received == 0 ? nil : 128 + received }
}
