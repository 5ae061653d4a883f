import BLEHost
import EightBall
import CLinux

/// Where the central's questions come from: --question (each --count times) or
/// standard input, one per line (a prompt when it is a terminal).
final class QuestionSource {
    var queue: [String]
    let interactive: Bool
    let fromStdin: Bool
    var stdinBuffer: [UInt8] = []
    var stdinClosed = false
    /// Lines taken as questions so far (0 at EOF: stdin was empty).
    var taken = 0

    init(questions: [String], count: Int) {
        fromStdin = questions.isEmpty
        queue = questions.flatMap { Array(repeating: $0, count: count) }
        interactive = fromStdin && isatty(0) == 1
        if fromStdin { _ = fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK) }
        self.count = count
    }
    let count: Int

    var descriptors: [pollfd] {
        fromStdin && !stdinClosed ? [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)] : []
    }

    var exhausted: Bool { queue.isEmpty && (!fromStdin || stdinClosed) }

    /// Shows the prompt unless it is on screen already (PromptLine: anything
    /// written below it ends its line, and the next pass shows it again).
    func prompt() {
        guard interactive, !PromptLine.showing, queue.isEmpty, !stdinClosed else { return }
        PromptLine.show("Ask the 8-Ball: ")
    }

    /// Reads what stdin has; complete lines become questions (each --count times).
    func readStdin() {
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { sysRead(0, $0.baseAddress, $0.count) }
            if n > 0 {
                stdinBuffer += chunk[0..<n]
            } else {
                if n == 0 {
                    stdinClosed = true
                    PromptLine.end()  // Ctrl-D on the prompt's line echoes no newline
                }
                break
            }
        }
        while let newline = stdinBuffer.firstIndex(of: 0x0A) {
            take(Array(stdinBuffer[0..<newline]))
            stdinBuffer.removeFirst(newline + 1)
        }
        if stdinClosed, !stdinBuffer.isEmpty {
            take(stdinBuffer)
            stdinBuffer = []
        }
    }

    func take(_ line: [UInt8]) {
        var bytes = line
        if bytes.last == 0x0D { bytes.removeLast() }
        let text = String(decoding: bytes, as: UTF8.self)
        if interactive { PromptLine.answered() }  // Enter ended the line; an empty one gets the prompt again
        guard !text.trimmingCharacters().isEmpty else { return }
        taken += 1
        queue += Array(repeating: text, count: count)
    }

    func next() -> String? { queue.isEmpty ? nil : queue.removeFirst() }
}

/// Prints answers (text or one JSON object per line) and keeps the exit code.
final class AnswerPrinter {
    let json: Bool
    /// On a terminal each question's outcome is shown on its line and the
    /// session goes on: only what ends the session decides the exit code.
    let interactive: Bool
    /// The first failure decides the exit code; 0 when everything was answered.
    var exitCode: Int32 = Exit.success
    var peerName = ""
    var peerAddress = ""
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

    func answered(question: String, answer: Int?, value: String, latency: UInt64) {
        let slug = answer.map { index -> String in
            var buffer = FixedBytes<16>()
            Answers.slug(index, into: &buffer)
            return buffer.string
        }
        let phrase = answer.map { index -> String in
            var buffer = Capacity.AnswerValue()
            Answers.phrase(index, into: &buffer)
            return buffer.string
        } ?? value
        if json {
            emit(["question": .string(question), "slug": slug.map { .string($0) } ?? .null, "phrase": .string(phrase),
                  "peer": .string(peerName), "address": .string(peerAddress), "rssi": .int(rssi),
                  "latency_ms": .int(Int(latency))])
        } else {
            printLine("\(question) -> \(phrase)")
        }
    }

    func problem(question: String, error: String, message: String) {
        if json {
            emit(["question": .string(question), "error": .string(error), "message": .string(message),
                  "peer": .string(peerName), "address": .string(peerAddress)])
            JSONOutput.failureShown = true
        } else {
            printLine("\(question) -> \(message)")
        }
    }

    /// One 8-Ball --scan found; a name it advertises shortened (past 29 bytes)
    /// is marked so: `--peer` takes the shortened or the full name.
    func found(_ entry: ScanEntry) {
        let name = entry.summary.name.string, shortened = !entry.summary.nameIsComplete
        if json {
            emit(["name": .string(name), "shortened": .bool(shortened), "address": .string(entry.address.string),
                  "rssi": .int(Int(entry.rssi))])
        } else {
            printLine("\(name)\(shortened ? " (shortened)" : "")\t\(entry.address.string)\t\(entry.rssi) dBm")
        }
    }

    func emit(_ fields: KeyValuePairs<String, JSONValue>) { emitJSON(fields) }
}

func emitJSON(_ fields: KeyValuePairs<String, JSONValue>) {
    let body = fields.map { "\(jsonString($0.key)):\($0.value.encoded)" }.joined(separator: ",")
    printLine("{\(body)}")
}

/// --json: every outcome is one JSON object per line on stdout. Answers, a
/// question's error and --scan's finds are printed as they happen; a run that
/// ends in a failure no line has described yet (no 8-Ball found, a transport,
/// controller or command-line error, Ctrl-C) ends with one error object:
/// {"error":"not_found","message":"no 8-Ball found within 5 s; …","exit":6}.
enum JSONOutput {
    nonisolated(unsafe) static var enabled = false
    /// A question's error object was printed (its exit code is the run's).
    nonisolated(unsafe) static var failureShown = false

    static func kind(_ code: Int32) -> String {
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
        let message = code == 130 || code == 143 ? "stopped by \(code == 130 ? "SIGINT (Ctrl-C)" : "SIGTERM")"
            : Log.firstError ?? "exit status \(code)"
        emitJSON(["error": .string(kind(code)), "message": .string(message), "exit": .int(Int(code))])
        return code
    }
}

enum JSONValue {
    case string(String), int(Int), bool(Bool), null
    var encoded: String {
        switch self {
        case .string(let s): jsonString(s)
        case .int(let i): String(i)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 {
                out += "\\u00" + hex(UInt8(scalar.value)).foldedCase()
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// The central role in the run loop: the asker session plus questions and output.
struct CentralLogic: RoleLogic, ~Copyable {
    var session: EightBallCentral
    let source: QuestionSource
    let printer: AnswerPrinter
    var started = false
    var current: String? = nil
    var finishing = false
    var exitCode: Int32? = nil
    /// --peer NAME, matched in any case: the core is given the address of the
    /// first 8-Ball with that name (until then an address nothing has).
    var peerName: String? = nil
    /// Advertisers seen, for "no 8-Ball found" (what was seen, and why not).
    var seen = ScanTable()
    /// 8-Balls whose shortened name began like --peer NAME but whose full name
    /// (GAP Device Name, read over GATT) is another: address → that name.
    var otherNames: [(address: UInt64, name: String)] = []
    /// The session reached .ready once: an 8-Ball that goes away later is
    /// "device offline" for the question, and the next question reconnects.
    var everReady = false
    var restartPending = false
    /// The transport, to name the controller when it stops answering.
    var controllerName = "the controller"
    /// A command timed out (or a hardware error came) and no bring-up finished since:
    /// a scan that finds nothing then says so instead of "no 8-Ball found".
    var controllerLost = false
    /// Seconds the scan ran before "no 8-Ball found" (nil: until stopped).
    var scanSeconds: Double? = nil

    static let unresolvedPeer = UInt64.max

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        switch event {
        case .gattClient(let client): logClientEvent(client)
        case .advertisingReport: noteAdvertiser(host.advertisingReport)
        case .disconnected:
            if source.fromStdin, everReady, current == nil, !finishing, Signals.stopReceived == 0 {
                Log.warning("the 8-Ball disconnected; the next question looks for it again")
            }
        case .controllerTimeout, .hardwareError: controllerLost = true
        case .ready: controllerLost = false
        default: break
        }
        session.handle(event, host: &host, now: now)
    }

    /// Keeps what was seen and resolves --peer NAME (any case) to an address:
    /// the name heard, or a shortened name NAME begins with (heard whole, scan
    /// response included), whose full name the session then reads (`.nameRead`).
    mutating func noteAdvertiser(_ report: AdvertisingReport) {
        let entry = seen.entries[seen.add(report)]
        guard let peerName, session.settings.peerAddress == CentralLogic.unresolvedPeer,
              entry.summary.hasService(EightBallUUID.service), !entry.summary.name.isEmpty else { return }
        let heard = entry.summary.name.string.foldedCase(), wanted = peerName.foldedCase()
        let mayBe = !entry.summary.nameIsComplete && entry.heardScanResponse && wanted.hasPrefix(heard)
            && !otherNames.contains { $0.address == entry.address.value }
        guard heard == wanted || mayBe else { return }
        session.settings.peerAddress = entry.address.value
    }

    /// The full name of a target advertised shortened: is it the one wanted?
    mutating func nameRead(_ connection: UInt16, found: Bool, _ host: inout Host, now: UInt64) {
        let name = found ? host.withClientLink(connection: connection) { $0.readValue.string } ?? "" : ""
        let heard = session.target.summary.name.string
        let wanted: Bool
        if let peerName {
            // Found by its full name, or by the shortened one --scan lists.
            wanted = (found && name.foldedCase() == peerName.foldedCase()) || heard.foldedCase() == peerName.foldedCase()
        } else {
            wanted = true
        }
        if wanted {
            if found { printer.peerName = name }
            Log.info(found ? "the 8-Ball's full name (GAP Device Name) is \"\(name)\""
                : "the 8-Ball \"\(heard)\" has no readable GAP Device Name; its shortened name stands")
        } else {
            let shown = found ? "\"\(name)\"" : "unreadable (no GAP Device Name)"
            Log.info("\"\(heard)\" at \(session.target.address.string) is not \"\(peerName ?? "")\": its full name is \(shown); looking on")
            otherNames.append((session.target.address.value, found ? name : ""))
            session.settings.peerAddress = CentralLogic.unresolvedPeer
        }
        session.nameChecked(wanted, host: &host, now: now)
    }

    func nextDeadline() -> UInt64? { session.nextDeadline() }

    /// The host's GATT client callback is the session's: the answer arrives as a notification.
    mutating func clientNotification(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {
        session.clientNotification(connection: connection, attribute: attribute, value: value)
    }

    mutating func poll(host: inout Host, now: UInt64) {
        if !started {
            started = true
            session.start(host: &host, now: now)
        }
        session.tick(host: &host, now: now)
        if !source.descriptors.isEmpty { source.readStdin() }
        while let event = session.nextEvent() { report(event, &host) }
        guard exitCode == nil, !session.settings.listOnly, Signals.stopReceived == 0 else { return }
        if session.isIdleForQuestion, !finishing {
            if let next = source.next() {
                current = next
                _ = Array(next.utf8).withUnsafeBytes { session.ask($0, host: &host, now: now) }
            } else if source.exhausted {
                finishing = true
                session.finish(host: &host)
            } else if everReady {
                // Interactive: the prompt comes once the 8-Ball is ready, after its log lines.
                source.prompt()
            }
        }
        while let event = session.nextEvent() { report(event, &host) }
    }

    mutating func report(_ event: CentralEvent, _ host: inout Host) {
        let question = current ?? ""
        // Stopped by a signal: the link is being closed on purpose; what the
        // session says about that is not an outcome of the question.
        let stopped = Signals.stopReceived != 0
        switch event {
        case .found(let entry):
            if session.settings.listOnly {
                printer.found(entry)
            } else {
                printer.peerName = entry.summary.name.string
                printer.peerAddress = entry.address.string
                printer.rssi = Int(entry.rssi)
                Log.info("found 8-Ball \"\(printer.peerName)\" at \(entry.address.string), RSSI \(entry.rssi) dBm")
            }
        case .connected(let address):
            Log.debug("connected to \(address.string)")
        case .nameRead(let connection, let found):
            nameRead(connection, found: found, &host, now: host.now)
        case .ready(let mtu):
            Log.info("8-Ball ready (MTU \(mtu))")
            everReady = true
        case .answered(let answer, let value, let latency):
            printer.answered(question: question, answer: answer, value: value.string, latency: latency)
            current = nil
        case .rejected:
            printer.problem(question: question, error: "rejected", message: "please rephrase as a question")
            printer.questionFailed(Exit.rejected)
            current = nil
        case .failed(let code):
            guard !stopped else { break }
            printer.problem(question: question, error: "att_error", message: "the 8-Ball refused the question (ATT error 0x\(hex(code)))")
            printer.questionFailed(Exit.failure)
            current = nil
        case .offline:
            guard !stopped else { break }
            printer.problem(question: question, error: "offline", message: "device offline")
            printer.questionFailed(Exit.timeout)
            current = nil
        case .notFound:
            guard !stopped else { break }
            if source.fromStdin, everReady {
                // The 8-Ball went away mid-session and this question did not
                // find it again: offline; the next one looks for it again.
                let within = scanSeconds.map { " within \(formatNumber($0)) s" } ?? ""
                Log.warning("the 8-Ball was not found again\(within); the next question looks for it again")
                if let current { printer.problem(question: current, error: "offline", message: "device offline") }
                printer.questionFailed(Exit.timeout)
                current = nil
                restartPending = true
            } else if controllerLost {
                Log.error("controller at \(controllerName) stopped answering HCI commands while scanning; nothing could be heard")
                printer.fail(Exit.controller)
            } else {
                for line in notFoundLines() { Log.error(line) }
                printer.fail(Exit.notFound)
            }
        case .notAnEightBall:
            Log.error("the device found does not offer the 8-Ball service")
            printer.fail(Exit.notFound)
        case .retrying:
            guard !stopped else { break }
            Log.warning("link lost mid-question; asking again on a fresh connection")
        case .scanComplete:
            if session.reportedAny == false {
                for line in notFoundLines() { Log.error(line) }
                printer.fail(Exit.notFound)
            }
            exitCode = printer.exitCode
        case .finished:
            if restartPending {
                restartPending = false
                let settings = session.settings
                session = EightBallCentral(settings: settings)  // scans again on the next question
                return
            }
            if source.fromStdin, source.taken == 0, !stopped, printer.exitCode == Exit.success {
                Log.error("no questions: standard input was empty (type questions, pipe them in, or use --question)")
                printer.fail(Exit.usage)
            }
            exitCode = printer.exitCode
        }
    }

    /// What was looked for and what was seen instead, in words.
    func notFoundLines() -> [String] {
        let settings = session.settings
        var wanted = "a device advertising the 8-Ball service and a name"
        if let peerName {
            wanted += ", named \"\(peerName)\" (any case)"
        } else if let address = settings.peerAddress {
            wanted += ", at \(BDAddress(value: address, type: 0).string)"
        }
        wanted += ", signal from \(settings.rssiMin) to \(settings.rssiMax) dBm (--rssi-min/--rssi-max)"
        let within = scanSeconds.map { " within \(formatNumber($0)) s" } ?? ""
        var lines = ["no 8-Ball found\(within); looked for \(wanted)"]
        if seen.count == 0 {
            lines.append("seen: nothing at all; is the 8-Ball on, in range, and this the right controller?")
        }
        for index in 0..<seen.count {
            let entry = seen.entries[index]
            let name = entry.summary.name.isEmpty ? "(no name)"
                : "\"\(entry.summary.name.string)\"" + (entry.summary.nameIsComplete ? "" : " (shortened)")
            let rssi = entry.rssi == 127 ? "RSSI unknown" : "\(entry.rssi) dBm"
            lines.append("seen: \(name) \(entry.address.string) \(rssi): \(whyNot(entry))")
        }
        return lines
    }

    /// Why a device seen is not the 8-Ball wanted (mirrors EightBallCentral's filter).
    func whyNot(_ entry: ScanEntry) -> String {
        let settings = session.settings
        if !entry.summary.hasService(EightBallUUID.service) { return "not an 8-Ball (no 8-Ball service)" }
        if entry.summary.name.isEmpty { return "an 8-Ball service but no name" }
        if entry.rssi == 127 || entry.rssi < settings.rssiMin || entry.rssi > settings.rssiMax {
            return "signal outside \(settings.rssiMin)…\(settings.rssiMax) dBm"
        }
        if let other = otherNames.first(where: { $0.address == entry.address.value }) {
            let shown = other.name.isEmpty ? "cannot be read (no GAP Device Name)" : "is \"\(other.name)\""
            return "not named \"\(peerName ?? "")\": its full name, read over GATT, \(shown)"
        }
        if let peerName, entry.summary.name.string.foldedCase() != peerName.foldedCase(),
           !(entry.heardScanResponse && peerName.foldedCase().hasPrefix(entry.summary.name.string.foldedCase())) {
            if !entry.summary.nameIsComplete, !entry.heardScanResponse,
               peerName.foldedCase().hasPrefix(entry.summary.name.string.foldedCase()) {
                return "not named \"\(peerName)\" as far as heard: its advertising data has the shortened name and no scan response (which carries the full name) was heard"
            }
            return "not named \"\(peerName)\""
        }
        if peerName == nil, let address = settings.peerAddress, entry.address.value != address { return "not the --peer address" }
        if !entry.connectable, !settings.listOnly { return "not connectable" }
        if !entry.summary.nameIsComplete, !entry.heardScanResponse {
            return "its name is shortened and no scan response (the full name) was heard"
        }
        return "an 8-Ball, but not found in time"
    }

    func logClientEvent(_ event: GATTClientEvent) {
        switch event {
        case .timeout(let connection, let request):
            Log.warning("ATT request 0x\(hex(request)) on 0x\(String(connection, radix: 16)) timed out; closing the link")
        case .error(_, let request, let handle, let code):
            Log.debug("ATT error 0x\(hex(code)) for request 0x\(hex(request)) on attribute 0x\(String(handle, radix: 16))")
        default:
            break
        }
    }
}

/// --controller-info: bring the controller up, print what it says, stop.
struct InfoLogic: RoleLogic {
    var exitCode: Int32? = nil
    mutating func poll(host: inout Host, now: UInt64) {}

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        guard case .ready = event, exitCode == nil else { return }
        printLine(controllerInfoText(host.controller))
        exitCode = Exit.success
    }
}

func controllerInfoText(_ info: ControllerInfo) -> String {
    let features = leFeatureList(info.leFeatures)
    let featureLines = features.isEmpty ? "" : "\n" + features.map { "                \($0)" }.joined(separator: "\n")
    return """
    HCI version:    \(coreVersionName(info.hciVersion)) (revision 0x\(String(info.hciRevision, radix: 16)))
    LMP version:    \(coreVersionName(info.lmpVersion)) (subversion 0x\(String(info.lmpSubversion, radix: 16)))
    Manufacturer:   \(companyName(info.manufacturer))
    Public address: \(info.publicAddress.string)\(info.publicAddress.isZero ? " (none)" : "")
    Address in use: \(info.address.string) (\(info.address.typeName))
    ACL buffers:    \(info.aclDataLength) bytes x \(info.aclPackets) (\(info.leBuffers ? "LE" : "shared BR/EDR"))
    LE features:    0x\(String(info.leFeatures, radix: 16))\(features.isEmpty ? " (none)" : "")\(featureLines)
    """ + (ChipsetReport.line.map { "\nChipset:        \($0)" } ?? "")
}

func hex4(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

extension ITCBDongle {
    /// The central's sessions share the questions still to ask and the printer
    /// (and so the exit code) across a USB unplug.
    func centralSession(configuration: HostConfiguration) -> (Session) -> SessionEnd {
        var settings = CentralSettings()
        settings.rssiMin = Int8(rssiMin)
        settings.rssiMax = Int8(rssiMax)
        let seconds = timeout ?? 5
        settings.answerTimeout = UInt64(seconds * 1000)
        // --scan without --timeout: until stopped (Ctrl-C); 100 years will do.
        let scanSeconds: Double? = scan && timeout == nil ? nil : max(seconds, 3)
        settings.scanTimeout = scanSeconds.map { UInt64($0 * 1000) } ?? 3_153_600_000_000
        settings.listOnly = scan
        var peerName: String? = nil
        if let peer {
            if let address = BDAddress(string: peer, type: 0) {
                settings.peerAddress = address.value
            } else {
                peerName = peer
                settings.peerAddress = CentralLogic.unresolvedPeer
            }
        }
        let source = QuestionSource(questions: scan ? ["-"] : question, count: count)
        let printer = AnswerPrinter(json: json, interactive: source.interactive)
        return { [scan] session in
            let transport = session.transport
            var logic = CentralLogic(session: EightBallCentral(settings: settings), source: source, printer: printer)
            logic.peerName = peerName
            logic.scanSeconds = scanSeconds
            logic.controllerName = transport.description
            var database = GATTDatabase()
            _ = Array("itcb-dongle".utf8).withUnsafeBytes { database.addGAPAndGATTServices(name: $0, appearance: 0) }
            Log.info(scan ? "scanning for 8-Balls on \(transport.description)\(scanSeconds == nil ? " until Ctrl-C" : "")" : "central on \(transport.description)")
            var loop = session.runLoop(host: Host(configuration: configuration, database: database), logic: logic)
            loop.extraDescriptor = { source.descriptors.first?.fd ?? -1 }
            let end = loop.run()
            guard let stopCode = Signals.stopExitCode else { return end }
            // Stopped by Ctrl-C/SIGTERM: 130/143, after a newline that ends the prompt.
            PromptLine.end()
            // A scan stopped by hand found what it found: no error;
            // what was seen and why each was passed over is for --log-level info.
            if scan, !loop.logic.session.reportedAny {
                for line in loop.logic.notFoundLines() { Log.info(line) }
            }
            return .exit(stopCode)
        }
    }
}
