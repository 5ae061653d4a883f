import CLinux
import BLEHost

/// One line per meaningful event on stderr (journald adds the timestamps under systemd).
enum Log {
    nonisolated(unsafe) static var level = LogLevel.info

    /// The first error line of the run (the one a --json error object carries).
    nonisolated(unsafe) static var firstError: String? = nil

    /// stderr is the journal's stream (under systemd): each line starts with
    /// its priority, so `journalctl -p warning` shows warnings and errors. On
    /// a terminal or a pipe, no prefix.
    nonisolated(unsafe) static var toJournal = clinux_is_journal_stream(2) != 0

    /// Inlined where it is called: the message is built there only when the
    /// level is on, and the one `emit` writes it (an @autoclosure passed into
    /// an outlined function gets a copy of that function per call site).
    /// A literal message is a BuiltText (outlined appends, not String
    /// interpolation inlined per line); a String variable takes the
    /// disfavoured generic overloads.
    @inline(__always)
    static func write(_ level: LogLevel, _ message: @autoclosure () -> BuiltText) {
        guard level <= Log.level || (level == .error && firstError == nil) else { return }
        emit(level, message())
    }

    @inline(__always)
    static func write(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= Log.level || (level == .error && firstError == nil) else { return }
        emit(level, message())
    }

    @inline(never)
    static func emit(_ level: LogLevel, _ message: consuming BuiltText) {
        if level == .error, firstError == nil { firstError = message.string }
        guard level <= Log.level else { return }
        message.bytes.withUnsafeBytes { writeLine(2, level, $0) }
    }

    @inline(never)
    static func emit(_ level: LogLevel, _ message: String) {
        if level == .error, firstError == nil { firstError = message }
        guard level <= Log.level else { return }
        writeLine(2, level, message)
    }

    @inline(__always) static func error(_ m: @autoclosure () -> BuiltText) { write(.error, m()) }
    @inline(__always) static func warning(_ m: @autoclosure () -> BuiltText) { write(.warning, m()) }
    @inline(__always) static func info(_ m: @autoclosure () -> BuiltText) { write(.info, m()) }
    @inline(__always) static func debug(_ m: @autoclosure () -> BuiltText) { write(.debug, m()) }
    @inline(__always) static func trace(_ m: @autoclosure () -> BuiltText) { write(.trace, m()) }

    @_disfavoredOverload @inline(__always) static func error<S: StringProtocol>(_ m: @autoclosure () -> S) { write(.error, String(m())) }
    @_disfavoredOverload @inline(__always) static func warning<S: StringProtocol>(_ m: @autoclosure () -> S) { write(.warning, String(m())) }
    @_disfavoredOverload @inline(__always) static func info<S: StringProtocol>(_ m: @autoclosure () -> S) { write(.info, String(m())) }
    @_disfavoredOverload @inline(__always) static func debug<S: StringProtocol>(_ m: @autoclosure () -> S) { write(.debug, String(m())) }
    @_disfavoredOverload @inline(__always) static func trace<S: StringProtocol>(_ m: @autoclosure () -> S) { write(.trace, String(m())) }
}

/// Writes straight to fd 2 (unbuffered, whole lines), below the prompt if one shows.
func writeStandardError(_ text: String) {
    PromptLine.end()
    writeRaw(2, text)
}

/// (As `writeLine`'s String form: the bytes taken by the builder's String append.)
func writeRaw(_ fd: Int32, _ text: String) {
    var bytes = BuiltText.Builder()
    bytes.appendInterpolation(text)
    _ = bytes.bytes.withUnsafeBytes { sysWrite(fd, $0.baseAddress, $0.count) }
}

/// Writes a line straight to fd 1, so piped output (--json) streams as it happens.
func printLine(_ text: String) { writeLine(1, nil, text) }

extension BDAddress {
    /// "AA:BB:CC:DD:EE:FF" (most significant byte first).
    var string: String {
        @inline(never) get {
            withUnsafeTemporaryAllocation(byteCount: 17, alignment: 1) { out in
                writeText(to: out.baseAddress!)
                return String(decoding: UnsafeRawBufferPointer(out), as: UTF8.self)
            }
        }
    }

    /// "AA:BB:CC:DD:EE:FF", 17 bytes at `out`: the one writer of `string` and `LogLine.address`.
    @inline(never)
    func writeText(to out: UnsafeMutableRawPointer) {
        let digits: StaticString = "0123456789ABCDEF"
        for i in 0..<6 {
            let value = printedByte(i)
            out.storeBytes(of: digits.utf8Start[Int(value >> 4)], toByteOffset: 3 * i, as: UInt8.self)
            out.storeBytes(of: digits.utf8Start[Int(value & 0xF)], toByteOffset: 3 * i + 1, as: UInt8.self)
            if i < 5 { out.storeBytes(of: UInt8(ascii: ":"), toByteOffset: 3 * i + 2, as: UInt8.self) }
        }
    }

    var typeName: String { type == 0 ? "public" : "random" }

    /// Parses "AA:BB:CC:DD:EE:FF".
    init?(string: String, type: UInt8) {
        guard let value = string.withBytes({ BDAddress.parse($0) }) else { return nil }
        self.init(value: value, type: type)
    }

    /// Six pieces between colons (empty ones skipped, as `split` leaves them
    /// out), each two bytes that `UInt8(_, radix: 16)` reads: two hex digits,
    /// or "+" and one, or "-0". Over the bytes: no array of Substrings.
    @inline(never)
    static func parse(_ text: UnsafeRawBufferPointer) -> UInt64? {
        var value: UInt64 = 0, pieces = 0, start = 0
        for end in 0 ... text.count where end == text.count || text[end] == 0x3A {
            defer { start = end + 1 }
            guard end > start else { continue }
            pieces += 1
            guard pieces <= 6, end - start == 2, let low = hexDigit(text[end - 1]) else { return nil }
            let byte: UInt8
            switch text[start] {
            case 0x2B: byte = low  // "+A"
            case 0x2D where low == 0: byte = 0  // "-0"
            default:
                guard let high = hexDigit(text[start]) else { return nil }
                byte = high << 4 | low
            }
            value = value << 8 | UInt64(byte)
        }
        return pieces == 6 ? value : nil
    }

    /// 0-9, A-F, a-f as their value; nil for anything else.
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30 ... 0x39: byte - 0x30
        case 0x41 ... 0x46: byte - 0x37
        case 0x61 ... 0x66: byte - 0x57
        default: nil
        }
    }
}

/// "0A": two upper-case hex digits.
@inline(never)
func hex(_ byte: UInt8) -> String {
    let digits: StaticString = "0123456789ABCDEF"
    var text: (UInt8, UInt8) = (digits.utf8Start[Int(byte >> 4)], digits.utf8Start[Int(byte & 0xF)])
    return withUnsafeBytes(of: &text) { String(decoding: $0, as: UTF8.self) }
}

func hexDump(_ bytes: UnsafeRawBufferPointer) -> String {
    let digits: StaticString = "0123456789ABCDEF"
    // Sized once and filled in place: spaces, then each byte's two digits.
    var text = [UInt8](repeating: 0x20, count: max(0, 3 * bytes.count - 1))
    for (index, byte) in bytes.enumerated() {
        text[3 * index] = digits.utf8Start[Int(byte >> 4)]
        text[3 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
    }
    return String(decoding: text, as: UTF8.self)
}

extension FixedBytes {
    var array: [UInt8] { withBytes { Array($0) } }
    var string: String { String(decoding: array, as: UTF8.self) }
}

/// HCI error codes by name (Core Vol 1 Part F), for disconnection reasons and failures.
func hciStatusName(_ status: UInt8) -> String {
    let name = tableName(hciStatusTable, UInt16(status)) ?? "error"
    return built("\(name) (0x\(hex(status)))")
}

private let hciStatusTable: StaticString = """
00 success
02 unknown connection identifier
03 hardware failure
05 authentication failure
08 connection timeout
0C command disallowed
12 invalid parameters
13 remote user terminated connection
14 remote device terminated (low resources)
15 remote device terminated (power off)
16 connection terminated by local host
1A unsupported remote feature
22 LL response timeout
28 instant passed
3B unacceptable connection parameters
3D connection terminated due to MIC failure
3E connection failed to be established
"""

/// Bluetooth Core versions by HCI/LMP version number (Assigned Numbers).
func coreVersionName(_ version: UInt8) -> String {
    guard let name = tableName(coreVersionTable, UInt16(version)) else { return built("version 0x\(hex(version))") }
    return built("Bluetooth \(name)")
}

private let coreVersionTable: StaticString = """
00 1.0b
01 1.1
02 1.2
03 2.0
04 2.1
05 3.0
06 4.0
07 4.1
08 4.2
09 5.0
0A 5.1
0B 5.2
0C 5.3
0D 5.4
0E 6.0
0F 6.1
"""

/// Logs a host event at its level, in the core's words (`HostEvent.describe`,
/// the firmware's too); the names of commands, statuses and companies come
/// from this board's tables.
func logHostEvent(_ event: HostEvent, host: borrowing Host) {
    // The level first: most events of a question (subscriptions) are debug lines.
    guard var level = LogLevel(rawValue: event.severity.rawValue) else { return }
    if case .advertising = event { level = AdvertisingNews.level(event) }
    if case .ready = event { AdvertisingNews.announced = false }
    // After the connection's own line: did it take the last slot?
    defer { if case .connected(_, _, false, _) = event { AdvertisingNews.connected(host.connectionCount, host.configuration.maxConnections) } }
    guard level <= Log.level else { return }
    // A line a peer or a noisy line can repeat: at most one a second (LineLimiter.swift).
    if let repeated = event.repeatKind, !RepeatedLines.admit(repeated.kind, key: repeated.key, level: level) { return }
    if case .gattClient(let client) = event {
        var text: BuiltText = "GATT client: "
        text.append(describe(client))
        Log.trace(text)
        return
    }
    var line = LogLine(level)
    if case .disconnected(let handle, _) = event, Signals.stopReceived != 0 {
        // Stopping (Ctrl-C, SIGTERM) closes the links: the reason code is the
        // one this side sent (0x13), not a central that hung up.
        line.text("disconnected: handle ")
        line.hex(handle)
        line.text(", closed by this side on stopping")
    } else {
        event.describe(into: &line, host: host)
    }
    line.write()
}
