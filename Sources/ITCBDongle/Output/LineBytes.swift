/// Log's and printLine's lines, built as bytes in one buffer and written with
/// one write(2): no String concatenation (prefix + line + "\n") at each writer.

/// "<4>itcb-dongle: warning: " (the priority under systemd only), appended to `out`.
func appendLogPrefix(_ level: LogLevel, to out: inout [UInt8]) {
    if Log.toJournal {
        out.append(UInt8(ascii: "<"))
        out.append(0x30 + UInt8(level.priority))
        out.append(UInt8(ascii: ">"))
    }
    appendStatic("itcb-dongle: ", to: &out)
    let name: StaticString = switch level {
    case .error: "error"
    case .warning: "warning"
    case .info: "info"
    case .debug: "debug"
    case .trace: "trace"
    }
    appendStatic(name, to: &out)
    appendStatic(": ", to: &out)
}

@inline(never)
func appendStatic(_ text: StaticString, to out: inout [UInt8]) {
    text.withUTF8Buffer { out.append(contentsOf: $0) }
}

/// `text` as a whole line (`UntrustedText.line`'s escapes), after `level`'s
/// prefix when there is one, and a newline, written to `fd` below the prompt.
@inline(never)
func writeLine(_ fd: Int32, _ level: LogLevel?, _ text: UnsafeRawBufferPointer) {
    var out: [UInt8] = []
    out.reserveCapacity(text.count + 32)
    if let level { appendLogPrefix(level, to: &out) }
    UntrustedText.escape(text, wholeLine: true) { piece in
        out.append(contentsOf: piece)
        return true
    }
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
