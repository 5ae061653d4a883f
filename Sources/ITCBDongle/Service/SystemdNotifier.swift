import BLEHost
import CLinux

/// The sd_notify datagram protocol (systemd.exec(5), sd_notify(3)) without
/// libsystemd: READY=1 once the role is up, STATUS= lines, STOPPING=1, and
/// WATCHDOG=1 every WATCHDOG_USEC/2 — sent from the run loop, so a stuck loop
/// stops the pings and systemd restarts the service.
final class SystemdNotifier {
    let fd: Int32
    var address = sockaddr_un()
    var addressLength: socklen_t = 0
    /// Half the watchdog period, ms; nil when systemd set no watchdog.
    let watchdogInterval: UInt64?
    var nextWatchdog: UInt64 = 0
    var readySent = false

    /// nil when NOTIFY_SOCKET is not set (not started by systemd with Type=notify).
    init?() {
        // The path's bytes as the environment has them (no String made of them).
        guard let path = environment("NOTIFY_SOCKET") else { return nil }
        let length = strlen(path)
        guard length > 0, length < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for i in 0..<length { raw[i] = UInt8(bitPattern: path[i]) }
            if raw[0] == UInt8(ascii: "@") { raw[0] = 0 }  // abstract namespace
        }
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + length)
        var interval: UInt64? = nil
        // Parsed where the environment has the bytes (no String made of them), as
        // Int(text) and Int32(exactly:) would: a PID outside Int32 is no PID.
        if let usec = SystemdNotifier.whole("WATCHDOG_USEC").flatMap({ unsignedValue($0, maximum: UInt64.max) }), usec > 0 {
            let pid = SystemdNotifier.whole("WATCHDOG_PID").flatMap { parsed -> Int64? in
                parsed.negative ? (parsed.magnitude <= 1 << 31 ? -Int64(parsed.magnitude) : nil)
                    : (parsed.magnitude <= UInt64(Int32.max) ? Int64(parsed.magnitude) : nil)
            }
            if pid == nil || pid == Int64(getpid()) { interval = max(usec / 2000, 1) }
        }
        watchdogInterval = interval
        nextWatchdog = monotonicMilliseconds()
    }

    /// An environment variable's value as a whole number (`parseWhole`), nil when unset or not one.
    @inline(never)
    static func whole(_ name: StaticString) -> (negative: Bool, magnitude: UInt64)? {
        guard let text = environment(name) else { return nil }
        return parseWhole(bytes: UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)))
    }

    /// The messages are BuiltText: their callers' literals are built out of line.
    @inline(never)
    func send(_ message: consuming BuiltText) {
        _ = message.bytes.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength)
                }
            }
        }
    }

    @inline(never)
    func ready(_ status: consuming BuiltText) {
        guard !readySent else { return self.status(status) }
        readySent = true
        var message: BuiltText = "READY=1\nSTATUS="
        message.append(status)
        send(message)
    }

    @inline(never)
    func status(_ text: consuming BuiltText) {
        var message: BuiltText = "STATUS="
        message.append(text)
        send(message)
    }

    /// The next time the loop must wake up for the watchdog.
    var deadline: UInt64? { watchdogInterval == nil ? nil : nextWatchdog }

    /// Pings when due and the controller answers (`answering`): a radio that
    /// no recovery brings back stops the pings, and systemd restarts the unit.
    /// Returns true when it pinged.
    @discardableResult
    func tick(now: UInt64, answering: Bool = true) -> Bool {
        guard let interval = watchdogInterval, now >= nextWatchdog else { return false }
        nextWatchdog = now + interval
        guard answering else { return false }
        send("WATCHDOG=1")
        return true
    }

    /// What a host event means for systemd.
    func observe(_ event: HostEvent, host: borrowing Host, role: Role) {
        switch event {
        case .advertising(true) where role == .peripheral:
            ready(SystemdNotifier.counts("advertising, ", host.connectionCount, " central(s) connected, ", host.recoveries))
        case .ready where role == .central:
            ready("controller \(host.controller.address) ready")
        case .connected, .disconnected:
            if readySent { status(SystemdNotifier.counts("", host.connectionCount, " connection(s), ", host.recoveries)) }
        case .controllerTimeout, .hardwareError:
            status("controller not responding; re-initialising (recovery \(host.recoveries))")
        case .shutdownComplete:
            break
        default:
            break
        }
    }

    /// "advertising, 1 central(s) connected, 0 controller recoveries": the two status lines' one form.
    @inline(never)
    static func counts(_ lead: StaticString, _ connections: Int, _ middle: StaticString, _ recoveries: Int) -> BuiltText {
        "\(lead)\(connections)\(middle)\(recoveries) controller recoveries"
    }

    func close() { sysClose(fd) }
}

/// getenv(3) with the name's bytes where they lie: a String literal handed to
/// getenv is copied into a C string first (String's utf8CString, an allocation).
@inline(__always)
func environment(_ name: StaticString) -> UnsafeMutablePointer<CChar>? {
    getenv(UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self))
}
