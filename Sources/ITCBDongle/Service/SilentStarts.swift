import CLinux
import BLEHost
import Chipsets

/// The backoff between starts on a dead dongle: how many starts in a row
/// ended with a silent controller (exit 4), kept in the unit's runtime
/// directory ($RUNTIME_DIRECTORY; RuntimeDirectoryPreserve=restart keeps it
/// across systemd's restarts). The next start waits 5 s, 10 s, 20 s, … (at
/// most 2 min) before it touches the dongle, so a dongle no rung brings back
/// costs a few journal lines per restart, ever further apart, and one that
/// comes back is tried again within 2 min. A controller that finishes
/// bring-up clears it. Without the variable (not under the unit): no backoff.
enum SilentStarts {
    /// The count read at start (cleared counts as 0 from then on).
    nonisolated(unsafe) static var count = 0
    static let firstWait: UInt64 = 5_000
    static let longestWait: UInt64 = 120_000

    /// $RUNTIME_DIRECTORY/silent-starts, its bytes as the environment has them
    /// (no String joined), nil without the variable. Out of line, as `clear`:
    /// inlined into the driver's event loop they cost 350 B.
    @inline(never)
    static func path() -> CPathBuffer? {
        guard let directory = environment("RUNTIME_DIRECTORY"), directory[0] != 0 else { return nil }
        // The unit configures one directory (several would be listed with ':' between them).
        var path = CPathBuffer()
        path.append(terminated: UnsafeRawPointer(directory).assumingMemoryBound(to: UInt8.self))
        path.append("/silent-starts")
        return path
    }

    /// How long to wait before this start's first attempt (ms): none for a count of 0.
    static func wait(after count: Int) -> UInt64 {
        guard count > 0 else { return 0 }
        return min(firstWait << UInt64(min(count - 1, 16)), longestWait)
    }

    /// Reads the count and waits its backoff (telling systemd why, and
    /// extending its start timeout); false when SIGINT/SIGTERM ended the wait.
    static func backOff(_ what: ArgText) -> Bool {
        guard let path = path() else { return true }
        count = read(path.pointer)
        let wait = wait(after: count)
        guard wait > 0 else { return true }
        let line: BuiltText = "controller at \(what) was silent at the last \(count) start(s); waiting \(wait / 1000) s before trying it again"
        Log.warning(line)
        if let notifier = SystemdNotifier() {
            var message: BuiltText = "EXTEND_TIMEOUT_USEC=\((wait + 30_000) * 1000)\nSTATUS="
            message.append(line)
            notifier.send(message)
            notifier.close()
        }
        let end = monotonicMilliseconds() + wait
        while true {
            let now = monotonicMilliseconds()
            if now >= end { return true }
            if Signals.sleep(Int32(min(end - now, 60_000))) == .stop { return false }
        }
    }

    /// This start ends with a silent controller: the next one waits longer.
    static func record() {
        guard let path = path() else { return }
        let text: BuiltText = "\(count + 1)\n"
        let fd = clinux_open(path.pointer, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o600)  // nor the exit
        guard fd >= 0 else { return }
        _ = text.bytes.withUnsafeBytes { sysWrite(fd, $0.baseAddress, $0.count) }
        sysClose(fd)
    }

    /// The controller answered bring-up: no backoff for the next start.
    @inline(never)
    static func clear() {
        guard count > 0, let path = path() else { return }
        count = 0
        _ = unlink(path.pointer)
    }

    static func read(_ path: UnsafePointer<CChar>) -> Int {
        let fd = clinux_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0)  // a FIFO there must not hold the start
        guard fd >= 0 else { return 0 }
        // On the stack: no array for 15 bytes.
        return withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { bytes in
            let n = sysRead(fd, bytes.baseAddress, 15)
            sysClose(fd)
            guard n > 0 else { return 0 }
            // Trimmed as ever (libc's white space too), then read over its bytes:
            // `parseInteger(String)` sliced it with a Range (String's slow index paths).
            var text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<n]), as: UTF8.self).trimmingCharacters()
            // At most 15 digits: no overflow; a negative count is 0.
            guard let (negative, magnitude) = text.withUTF8({ parseWhole(bytes: $0) }), !negative else { return 0 }
            return Int(magnitude)
        }
    }
}
