/// Log's and printLine's lines, built as bytes in one buffer and written with
/// one write(2): no String concatenation (prefix + line + "\n") at each writer.

/// "<4>itcb-dongle: warning: " (the priority under systemd only), appended to `out`.
func appendLogPrefix(_ level: LogLevel, to out: inout [UInt8]) {
    withUnsafeTemporaryAllocation(byteCount: 32, alignment: 1) { prefix in
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: prefix[0 ..< writeLogPrefix(level, to: prefix.baseAddress!)]))
    }
}

/// The same written at `out` (up to 25 bytes); how many. The one prefix
/// writer of `writeLine` and `LogLine`.
@inline(never)
func writeLogPrefix(_ level: LogLevel, to out: UnsafeMutableRawPointer) -> Int {
    var count = 0
    func put(_ text: StaticString) {
        out.advanced(by: count).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        count += text.utf8CodeUnitCount
    }
    if Log.toJournal {
        out.storeBytes(of: UInt8(ascii: "<"), toByteOffset: 0, as: UInt8.self)
        out.storeBytes(of: 0x30 + UInt8(level.priority), toByteOffset: 1, as: UInt8.self)
        out.storeBytes(of: UInt8(ascii: ">"), toByteOffset: 2, as: UInt8.self)
        count = 3
    }
    put("itcb-dongle: ")
    let name: StaticString = switch level {
    case .error: "error"
    case .warning: "warning"
    case .info: "info"
    case .debug: "debug"
    case .trace: "trace"
    }
    put(name)
    put(": ")
    return count
}

/// `text` as a whole line (`UntrustedText.line`'s escapes), after `level`'s
/// prefix when there is one, and a newline, written to `fd` below the prompt.
@inline(never)
func writeLine(_ fd: Int32, _ level: LogLevel?, _ text: UnsafeRawBufferPointer) {
    var out: [UInt8] = []
    out.reserveCapacity(text.count + 32)
    if let level { appendLogPrefix(level, to: &out) }
    UntrustedText.append(escaped: text, wholeLine: true, to: &out)
    out.append(0x0A)
    PromptLine.end()
    out.withUnsafeBytes { _ = sysWrite(fd, $0.baseAddress, $0.count) }
}

/// (The String's bytes taken by the builder's one String append: its
/// `withUTF8`, inlined here, was 200 bytes of code.)
@inline(never)
func writeLine(_ fd: Int32, _ level: LogLevel?, _ text: String) {
    var line = BuiltText.Builder()
    line.appendInterpolation(text)
    line.bytes.withUnsafeBytes { writeLine(fd, level, $0) }
}
