import BLEHost
import EightBall
import CLinux

/// --json: every outcome is one JSON object per line on stdout. Answers, a
/// question's error and --scan's finds are printed as they happen; a run that
/// ends in a failure no line has described yet (no 8-Ball found, a transport,
/// controller or command-line error, Ctrl-C) ends with one error object:
/// {"error":"not_found","message":"no 8-Ball found within 5 s; …","exit":6}.
enum JSONOutput {
    nonisolated(unsafe) static var enabled = false
    /// A question's error object was printed (its exit code is the run's).
    nonisolated(unsafe) static var failureShown = false
    /// The error object's `error` when the exit code alone does not say it
    /// (`ambiguous`: --peer named more than one 8-Ball, exit 6).
    nonisolated(unsafe) static var errorKind: StaticString? = nil

    static func kind(_ code: Int32) -> String { kindText(code).description }

    /// The kinds are plain words: written into the JSON string as they are.
    static func kindText(_ code: Int32) -> StaticString {
        switch code {
        case Exit.usage: "usage"
        case Exit.transport: "transport"
        case Exit.controller: "controller"
        case Exit.rejected: "rejected"
        case Exit.notFound: "not_found"
        case Exit.timeout: "offline"
        case Exit.unplugged: "unplugged"
        case 130, 143: "interrupted"
        default: "internal"
        }
    }

    /// Called with the exit code just before exiting; returns it.
    static func finish(_ code: Int32) -> Int32 {
        guard enabled, code != Exit.success, !failureShown else { return code }
        failureShown = true
        // The line built as bytes: a KeyValuePairs of Strings and values cost more code.
        var line = BuiltText.Builder()
        line.appendLiteral("{\"error\":\"")
        line.appendInterpolation(errorKind ?? kindText(code))
        line.appendLiteral("\",\"message\":")
        if code == 130 || code == 143 {
            line.appendLiteral(code == 130 ? "\"stopped by SIGINT (Ctrl-C)\"" : "\"stopped by SIGTERM\"")
        } else if let first = Log.firstError {
            line.appendInterpolation(json: first)
        } else {
            line.appendLiteral("\"exit status ")
            line.appendInterpolation(Int(code))
            line.appendLiteral("\"")
        }
        line.appendLiteral(",\"exit\":")
        line.appendInterpolation(Int(code))
        line.appendLiteral("}")
        printText(BuiltText(line))
        return code
    }
}

/// `s` as a JSON string, quotes included.
@inline(never)
func jsonString(_ s: String) -> String {
    var out = BuiltText.Builder()
    out.appendJSONString(s)
    return BuiltText(out).string
}

extension BuiltText.Builder {
    /// `s` as a JSON string, quotes included (`jsonString`), appended.
    @inline(never)
    mutating func appendJSONString(_ s: consuming String) {
        // Byte by byte (a scalar decoded only where it needs looking at).
        withBytes(s) { utf8 in
            let raw = UnsafeRawBufferPointer(utf8)
            bytes.append(0x22)
            var index = 0
            while index < raw.count {
                let length = max(UntrustedText.sequenceLength(raw, at: index), 1)
                let scalar = UntrustedText.decode(raw, at: index, length: length)
                // Each escape built on the stack and appended once (one append site).
                var escape = UntrustedText.Escape()
                switch scalar {
                case 0x22, 0x5C: escape.put(UInt8(scalar))
                case 0x0A: escape.put(UInt8(ascii: "n"))
                case 0x0D: escape.put(UInt8(ascii: "r"))
                case 0x09: escape.put(UInt8(ascii: "t"))
                // Controls, DEL, C1 and bidi controls as \u escapes (RFC 8259 §7):
                // the same string to a JSON reader, nothing a terminal acts on.
                case _ where UntrustedText.needsEscape(scalar, wholeLine: true): escape.scalar(scalar)
                default:
                    bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[index ..< index + length]))
                    index += length
                    continue
                }
                _ = escape.withBytes { piece in
                    bytes.append(contentsOf: piece)
                    return true
                }
                index += length
            }
            bytes.append(0x22)
        }
    }
}
