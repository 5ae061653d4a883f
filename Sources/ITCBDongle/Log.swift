import CLinux
import BLEHost

/// Log levels of --log-level, most to least severe.
enum LogLevel: Int, Comparable, CaseIterable {
    case error, warning, info, debug, trace

    init?(name: String) {
        switch name.foldedCase() {
        case "error": self = .error
        case "warning", "warn": self = .warning
        case "info": self = .info
        case "debug": self = .debug
        case "trace": self = .trace
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        case .trace: "trace"
        }
    }

    static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// One line per meaningful event on stderr (journald adds the timestamps under systemd).
enum Log {
    nonisolated(unsafe) static var level = LogLevel.info

    /// The first error line of the run (the one a --json error object carries).
    nonisolated(unsafe) static var firstError: String? = nil

    /// Inlined where it is called: the message is built there only when the
    /// level is on, and the one `emit` writes it (an @autoclosure passed into
    /// an outlined function gets a copy of that function per call site).
    @inline(__always)
    static func write(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= Log.level || (level == .error && firstError == nil) else { return }
        emit(level, message())
    }

    @inline(never)
    static func emit(_ level: LogLevel, _ message: String) {
        if level == .error, firstError == nil { firstError = message }
        guard level <= Log.level else { return }
        writeStandardError("itcb-dongle: \(level.name): \(message)\n")
    }

    @inline(__always) static func error(_ m: @autoclosure () -> String) { write(.error, m()) }
    @inline(__always) static func warning(_ m: @autoclosure () -> String) { write(.warning, m()) }
    @inline(__always) static func info(_ m: @autoclosure () -> String) { write(.info, m()) }
    @inline(__always) static func debug(_ m: @autoclosure () -> String) { write(.debug, m()) }
    @inline(__always) static func trace(_ m: @autoclosure () -> String) { write(.trace, m()) }
}

/// A log line built in a fixed buffer and written with one write(2): the line
/// logged per question costs no allocation.
struct LogLine {
    var bytes = FixedBytes<768>()

    init(_ level: LogLevel) {
        text("itcb-dongle: ")
        switch level {
        case .error: text("error")
        case .warning: text("warning")
        case .info: text("info")
        case .debug: text("debug")
        case .trace: text("trace")
        }
        text(": ")
    }

    mutating func text(_ literal: StaticString) {
        literal.withUTF8Buffer { _ = bytes.append(UnsafeRawBufferPointer($0)) }
    }

    /// "0x" and lower-case hex digits, as String(radix: 16) prints them.
    mutating func hex(_ value: UInt16) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0x30, 0x78, 0, 0, 0, 0)
        var count = 2
        withUnsafeMutableBytes(of: &digits) { out in
            var started = false
            for shift in stride(from: 12, through: 0, by: -4) {
                let digit = UInt8((value &>> UInt16(shift)) & 0xF)
                if digit == 0, !started, shift > 0 { continue }
                started = true
                out[count] = digit < 10 ? 48 + digit : 87 + digit
                count += 1
            }
        }
        withUnsafeBytes(of: &digits) { _ = bytes.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Bytes of a value; control characters become '?' so one line stays one line.
    /// The clean run before the first control character (usually all of it) is
    /// appended whole; the rest is cleaned in a stack chunk, a chunk at a time.
    mutating func value(_ raw: UnsafeRawBufferPointer) {
        let room = max(0, min(raw.count, bytes.freeSpace - 1))
        var clean = 0
        while clean < room, raw[clean] >= 0x20, raw[clean] != 0x7F { clean += 1 }
        _ = bytes.append(UnsafeRawBufferPointer(rebasing: raw[0..<clean]))
        guard clean < room else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { chunk in
            var offset = clean
            while offset < room {
                let n = min(64, room - offset)
                for i in 0..<n {
                    let byte = raw[offset + i]
                    chunk[i] = byte < 0x20 || byte == 0x7F ? 0x3F : byte
                }
                _ = bytes.append(UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(chunk)[0..<n]))
                offset += n
            }
        }
    }

    mutating func write() {
        PromptLine.end()
        if !bytes.append(0x0A) {
            bytes.truncate(to: bytes.count - 1)
            bytes.append(0x0A)
        }
        bytes.withBytesInPlace { _ = sysWrite(2, $0.baseAddress, $0.count) }
    }
}

/// The interactive central's prompt ("Ask the 8-Ball: ") while it waits on its
/// line: whatever is written next (a log line, an answer) first ends that line,
/// so nothing lands on the prompt; QuestionSource shows the prompt again below.
enum PromptLine {
    nonisolated(unsafe) static var showing = false

    static func show(_ prompt: String) {
        writeRaw(2, prompt)
        showing = true
    }

    /// The user ended the line (Enter: the terminal echoed the newline).
    static func answered() { showing = false }

    /// Ends the prompt's line if it is on screen (Ctrl-D, Ctrl-C, a log line).
    static func end() {
        guard showing else { return }
        showing = false
        writeRaw(2, "\n")
    }
}

/// Writes straight to fd 2 (unbuffered, whole lines), below the prompt if one shows.
func writeStandardError(_ text: String) {
    PromptLine.end()
    writeRaw(2, text)
}

func writeRaw(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { sysWrite(fd, $0.baseAddress, $0.count) }
}

/// Writes a line straight to fd 1, so piped output (--json) streams as it happens.
func printLine(_ text: String) {
    PromptLine.end()
    writeRaw(1, text + "\n")
}

/// Monotonic milliseconds: the only clock the core ever sees.
func monotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
}

extension BDAddress {
    /// "AA:BB:CC:DD:EE:FF" (most significant byte first).
    var string: String {
        (0..<6).map { hex(printedByte($0)) }.joined(separator: ":")
    }

    var typeName: String { type == 0 ? "public" : "random" }

    /// Parses "AA:BB:CC:DD:EE:FF".
    init?(string: String, type: UInt8) {
        let parts = string.split(separator: ":")
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.init(value: value, type: type)
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}

func hexDump(_ bytes: UnsafeRawBufferPointer) -> String {
    bytes.map { hex($0) }.joined(separator: " ")
}

extension FixedBytes {
    var array: [UInt8] { withBytes { Array($0) } }
    var string: String { String(decoding: array, as: UTF8.self) }
}

/// HCI error codes by name (Core Vol 1 Part F), for disconnection reasons and failures.
func hciStatusName(_ status: UInt8) -> String {
    let name: String
    switch status {
    case 0x00: name = "success"
    case 0x02: name = "unknown connection identifier"
    case 0x03: name = "hardware failure"
    case 0x05: name = "authentication failure"
    case 0x08: name = "connection timeout"
    case 0x0C: name = "command disallowed"
    case 0x12: name = "invalid parameters"
    case 0x13: name = "remote user terminated connection"
    case 0x14: name = "remote device terminated (low resources)"
    case 0x15: name = "remote device terminated (power off)"
    case 0x16: name = "connection terminated by local host"
    case 0x1A: name = "unsupported remote feature"
    case 0x22: name = "LL response timeout"
    case 0x28: name = "instant passed"
    case 0x3B: name = "unacceptable connection parameters"
    case 0x3D: name = "connection terminated due to MIC failure"
    case 0x3E: name = "connection failed to be established"
    default: name = "error"
    }
    return "\(name) (0x\(hex(status)))"
}

/// Bluetooth Core versions by HCI/LMP version number (Assigned Numbers).
func coreVersionName(_ version: UInt8) -> String {
    let names = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.1"]
    return Int(version) < names.count ? "Bluetooth \(names[Int(version)])" : "version 0x\(hex(version))"
}

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
    if case .gattClient(let client) = event {
        Log.trace("GATT client: \(describe(client))")
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

/// The controller stops advertising when a central connects and the host
/// resumes it at once while a slot is free: that pair, once per connection, is
/// debug. At info: the first "advertising" after bring-up, "advertising
/// stopped" when it stays stopped (every --max-centrals slot taken), and
/// "advertising" again when it resumes after that.
enum AdvertisingNews {
    nonisolated(unsafe) static var announced = false
    nonisolated(unsafe) static var saidStopped = false

    static func level(_ event: HostEvent) -> LogLevel {
        guard case .advertising(let enabled) = event, enabled, !announced || saidStopped else { return .debug }
        announced = true
        saidStopped = false
        return .info
    }

    static func connected(_ count: Int, _ limit: Int) {
        guard announced, count >= limit, !saidStopped else { return }
        saidStopped = true
        Log.info("advertising stopped: \(count) central(s) connected, every --max-centrals slot taken")
    }
}

/// `value`'s decimal digits (ASCII, no sign), least significant first, and how
/// many: numbers as text without a String (log lines, the metrics file).
@inline(__always)
func decimalDigits(_ value: Int) -> (digits: InlineArray<20, UInt8>, count: Int) {
    var magnitude = value.magnitude
    var digits = InlineArray<20, UInt8>(repeating: 0)
    var count = 0
    repeat {
        digits[count] = 48 + UInt8(magnitude % 10)
        magnitude /= 10
        count += 1
    } while magnitude > 0
    return (digits, count)
}

extension LogLine: LogSink {
    mutating func decimal(_ value: Int) {
        if value < 0 { bytes.append(0x2D) }
        var (digits, count) = decimalDigits(value)
        while count > 0 {
            count -= 1
            bytes.append(digits[count])
        }
    }

    mutating func byte(_ value: UInt8) {
        let digits: StaticString = "0123456789ABCDEF"
        bytes.append(digits.utf8Start[Int(value >> 4)])
        bytes.append(digits.utf8Start[Int(value & 0xF)])
    }

    /// Built in a 17-byte stack buffer and appended once (on the line of every
    /// answered question: per-byte appends cost three times as much).
    mutating func address(_ address: BDAddress) {
        let digits: StaticString = "0123456789ABCDEF"
        var text: (UInt64, UInt64, UInt8) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            for i in 0..<6 {
                let value = address.printedByte(i)
                out[3 * i] = digits.utf8Start[Int(value >> 4)]
                out[3 * i + 1] = digits.utf8Start[Int(value & 0xF)]
                if i < 5 { out[3 * i + 2] = UInt8(ascii: ":") }
            }
            _ = bytes.append(UnsafeRawBufferPointer(rebasing: out[0..<17]))
        }
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { _ = bytes.append(UnsafeRawBufferPointer($0)) }
    }

    mutating func commandName(_ opcode: UInt16) { string(hciCommandName(opcode)) }
    mutating func companyName(_ identifier: UInt16) { string(nameOfCompany(identifier)) }
    mutating func coreVersion(_ version: UInt8) { string(coreVersionName(version)) }
    mutating func statusName(_ status: UInt8) { string(hciStatusName(status)) }
}

/// (The global name, out of reach of LogLine's hook of the same name.)
private func nameOfCompany(_ identifier: UInt16) -> String { companyName(identifier) }
