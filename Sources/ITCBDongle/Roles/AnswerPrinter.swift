import BLEHost
import EightBall
import CLinux

/// Prints answers (text or one JSON object per line) and keeps the exit code.
final class AnswerPrinter {
    let json: Bool
    /// On a terminal each question's outcome is shown on its line and the
    /// session goes on: only what ends the session decides the exit code.
    let interactive: Bool
    /// The first failure decides the exit code; 0 when everything was answered.
    var exitCode: Int32 = Exit.success
    var peerName = ""
    /// nil until found: `"address":""`.
    var peerAddress: BDAddress? = nil
    var rssi: Int = 0

    init(json: Bool, interactive: Bool) {
        self.json = json
        self.interactive = interactive
    }

    func fail(_ code: Int32) {
        if exitCode == Exit.success { exitCode = code }
    }

    /// A question that was rejected, refused or not answered in time.
    func questionFailed(_ code: Int32) {
        if !interactive { fail(code) }
    }

    /// `value`: the Answer as it came (shown escaped when it is no known answer).
    func answered(question: String, answer: Int?, value: Capacity.AnswerValue, latency: UInt64) {
        var phrase = value
        if let answer {
            phrase.removeAll()
            Answers.phrase(answer, into: &phrase)
        }
        var line = begin(question)
        if json {
            // The phrase written as JSON from its bytes, as `jsonString` would (no String made of it).
            line.appendLiteral("\"slug\":")
            line.appendInterpolation(slug: answer)
            line.appendLiteral(",\"phrase\":")
            phrase.withBytes { line.appendJSON($0) }
            appendPeer(&line)
            line.appendLiteral("\",\"rssi\":")
            line.appendInterpolation(rssi)
            line.appendLiteral(",\"latency_ms\":")
            line.appendInterpolation(Int(latency))
            line.appendLiteral("}")
        } else {
            line.appendInterpolation(escaped: phrase)
        }
        printText(BuiltText(line))
    }

    /// `error` and `message` are the program's own: as JSON strings they need no escapes.
    func problem(question: String, error: StaticString, message: consuming BuiltText) {
        var line = begin(question)
        if json {
            line.appendLiteral("\"error\":\"")
            line.appendInterpolation(error)
            line.appendLiteral("\",\"message\":\"")
            line.appendInterpolation(message)
            line.appendLiteral("\"")
            appendPeer(&line)
            line.appendLiteral("\"}")
            JSONOutput.failureShown = true
        } else {
            line.appendInterpolation(message)
        }
        printText(BuiltText(line))
    }

    /// A question's line up to its outcome, for both outcomes' lines:
    /// `{"question":"…",` (JSON) or `question -> `.
    @inline(never)
    func begin(_ question: String) -> BuiltText.Builder {
        var line = BuiltText.Builder()
        if json {
            line.appendLiteral("{\"question\":")
            line.appendInterpolation(json: question)
            line.appendLiteral(",")
        } else {
            line.appendInterpolation(escaped: question)
            line.appendLiteral(" -> ")
        }
        return line
    }

    /// `,"peer":"…","address":"…` (the address's closing quote is the caller's).
    @inline(never)
    func appendPeer(_ line: inout BuiltText.Builder) {
        line.appendLiteral(",\"peer\":")
        line.appendInterpolation(json: peerName)
        line.appendLiteral(",\"address\":\"")
        line.appendInterpolation(jsonAddress: peerAddress)
    }

    /// One 8-Ball --scan found; a name it advertises shortened (past 29 bytes)
    /// is marked so: `--peer` takes the shortened or the full name.
    func found(_ entry: ScanEntry) {
        let shortened = !entry.summary.nameIsComplete
        // One builder, a piece at a time (each `append` of a literal made a BuiltText).
        var line = BuiltText.Builder()
        if json {
            line.appendLiteral("{\"name\":")
            entry.summary.name.withBytes { line.appendJSON($0) }  // as jsonString would: no String made
            line.appendLiteral(",\"shortened\":")
            line.appendInterpolation(shortened)
            line.appendLiteral(",\"address\":\"")
            line.appendInterpolation(entry.address)
            line.appendLiteral("\",\"rssi\":")
            if entry.rssi == 127 { line.appendLiteral("null") } else { line.appendInterpolation(Int(entry.rssi)) }
            line.appendLiteral("}")
        } else {
            line.appendInterpolation(escaped: entry.summary.name)
            if shortened { line.appendLiteral(" (shortened)") }
            line.appendLiteral("\t")
            line.appendInterpolation(entry.address)
            line.appendLiteral("\t")
            if entry.rssi == 127 {
                line.appendLiteral("RSSI unknown")  // 127: the controller had none
            } else {
                line.appendInterpolation(entry.rssi)
                line.appendLiteral(" dBm")
            }
        }
        printText(BuiltText(line))
    }
}
