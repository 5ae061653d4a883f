import BLEHost
import EightBall
import CLinux

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
    /// (GAP Device Name, read over GATT) is another: address → that name, escaped.
    var otherNames: [(address: UInt64, name: String)] = []
    /// 8-Balls the session may pick whose name is --peer NAME (any case): two or
    /// more when the scan has settled and --peer is refused, never guessed.
    var namesakes: [ScanEntry] = []
    var refusedPeer = false
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
    /// Questions and outcomes for --metrics-file.
    var counts = CentralCounts()

    static let unresolvedPeer = UInt64.max
    /// With --peer NAME the scan listens this long (ms; half of --timeout if
    /// that is less) before it connects (docs/COMMAND-LINE.md, "--peer").
    static let peerSettle: UInt64 = 1_000

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        switch event {
        case .gattClient(let client): logClientEvent(client)
        case .advertisingReport:
            guard !refusedPeer else { return }
            noteAdvertiser(host.advertisingReport)
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
    /// Every 8-Ball heard with the name itself is kept (`namesakes`): a second
    /// one while the scan settles makes the choice the user's (`refusePeer`).
    @inline(never)
    mutating func noteAdvertiser(_ report: AdvertisingReport) {
        let index = seen.add(report)
        let entry = seen.entries[index]
        guard let peerName, session.isCandidate(entry) else { return }
        let (same, beginsLike) = CentralLogic.compareNames(entry.summary.nameString, peerName)
        let address = entry.address.value
        let mayBe = !entry.summary.nameIsComplete && entry.heardScanResponse && beginsLike
            && !otherNames.contains { $0.address == address }
        guard same || mayBe else { return }
        if session.settings.listOnly {
            session.settings.peerAddress = address  // --scan lists each of them
            return
        }
        if same {
            if let index = namesakes.firstIndex(where: { $0.address.value == address }) {
                namesakes[index] = entry
            } else {
                namesakes.append(entry)
            }
            if namesakes.count > 1 {
                session.settings.peerAddress = CentralLogic.unresolvedPeer
                session.dropTarget()
                return
            }
        }
        if session.settings.peerAddress == CentralLogic.unresolvedPeer { session.settings.peerAddress = address }
    }

    /// --peer NAME names more than one 8-Ball: refused (exit 6), with each of
    /// them, so that the user picks one by its address.
    mutating func refusePeer(_ host: inout Host) {
        refusedPeer = true
        let shortened = namesakes.contains { !$0.summary.nameIsComplete }
        Log.error("""
            --peer "\(escaped: peerName ?? "")" matches \(namesakes.count) 8-Balls, so none was asked; \
            give the one you mean by its address (--peer ADDRESS)\(shortened ? " or its full name" : "")
            """)
        for entry in namesakes { logEntry(.error, "candidate: ", entry, whyNot: false) }
        JSONOutput.errorKind = "ambiguous"
        printer.fail(Exit.notFound)
        current = nil
        finishing = true
        session.finish(host: &host)
    }

    /// A name heard against --peer's, in any case: the same, or the wanted one begins
    /// with it (a shortened name). Out of line: the folding was inlined at each of the callers.
    @inline(never)
    static func compareNames(_ heard: String, _ wanted: String) -> (same: Bool, beginsLike: Bool) {
        let heard = heard.foldedCase(), wanted = wanted.foldedCase()
        return (sameBytes(heard, wanted), wanted.hasBytePrefix(heard))
    }

    /// An advertiser as the messages show it: `"NAME" (shortened) ADDRESS -50 dBm`,
    /// appended to its line (no BuiltText of its own).
    @inline(never)
    func describe(_ entry: ScanEntry, into text: inout BuiltText.Builder) {
        if entry.summary.name.isEmpty {
            text.appendLiteral("(no name)")
        } else {
            text.appendLiteral("\"")
            text.appendInterpolation(escaped: entry.summary.name)
            text.appendLiteral(entry.summary.nameIsComplete ? "\"" : "\" (shortened)")
        }
        text.appendLiteral(" ")
        text.appendInterpolation(entry.address)
        if entry.rssi == 127 {
            text.appendLiteral(" RSSI unknown")
        } else {
            text.appendLiteral(" ")
            text.appendInterpolation(entry.rssi)
            text.appendLiteral(" dBm")
        }
    }

    /// The full name of a target advertised shortened: is it the one wanted?
    mutating func nameRead(_ connection: UInt16, found: Bool, _ host: inout Host, now: UInt64) {
        // Both read in one look-up of the link, from its bytes where they lie (no copies of the value).
        let (name, nameShown) = (found ? host.withClientLink(connection: connection) { link in
            link.readValue.withBytes { (String(repairingUTF8: $0), UntrustedText.escaped($0)) }
        } : nil) ?? ("", "")
        let heard = session.target.summary.nameString
        let wanted: Bool
        if let peerName {
            // Found by its full name, or by the shortened one --scan lists.
            wanted = (found && CentralLogic.compareNames(name, peerName).same) || CentralLogic.compareNames(heard, peerName).same
        } else {
            wanted = true
        }
        if wanted {
            if found { printer.peerName = name }
            Log.info(found ? "the 8-Ball's full name (GAP Device Name) is \"\(nameShown)\""
                : "the 8-Ball \"\(escaped: session.target.summary.name)\" has no readable GAP Device Name; its shortened name stands")
        } else {
            // One builder: the name shown made as a BuiltText of its own cost a second one.
            if LogLevel.info <= Log.level {
                var line = BuiltText.Builder()
                line.appendLiteral("\"")
                line.appendInterpolation(escaped: session.target.summary.name)
                line.appendLiteral("\" at ")
                line.appendInterpolation(session.target.address)
                line.appendLiteral(" is not \"")
                line.appendInterpolation(escaped: peerName ?? "")
                if found {
                    line.appendLiteral("\": its full name is \"")
                    line.appendInterpolation(nameShown)
                    line.appendLiteral("\"; looking on")
                } else {
                    line.appendLiteral("\": its full name is unreadable (no GAP Device Name); looking on")
                }
                Log.emit(.info, BuiltText(line))
            }
            otherNames.append((session.target.address.value, nameShown))
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
        // The scan settled with two 8-Balls of that name: none is asked.
        if namesakes.count > 1, !refusedPeer, !session.settings.listOnly, !session.isSettling { refusePeer(&host) }
        if source.pollsStdin { source.readStdin() }
        reportEvents(&host)
        guard exitCode == nil, !session.settings.listOnly, Signals.stopReceived == 0 else { return }
        if session.isIdleForQuestion, !finishing {
            if let next = source.next() {
                current = next
                counts.asked += 1
                _ = withBytes(next) { session.ask(UnsafeRawBufferPointer($0), host: &host, now: now) }
            } else if source.exhausted {
                finishing = true
                session.finish(host: &host)
            } else if everReady {
                // Interactive: the prompt comes once the 8-Ball is ready, after its log lines.
                source.prompt()
            }
        }
        reportEvents(&host)
    }

    /// The session's events so far, each reported. Out of line: `poll` drains them twice.
    @inline(never)
    mutating func reportEvents(_ host: inout Host) {
        while let event = session.nextEvent() { report(event, &host) }
    }

    /// The question being asked ends unanswered: said once (text or JSON), and the next may come.
    /// (`error` and `message` are the program's own: nothing in them a JSON string escapes.)
    mutating func questionFailed(_ error: StaticString, _ message: consuming BuiltText, _ exit: Int32) {
        if let current { printer.problem(question: current, error: error, message: message) }
        printer.questionFailed(exit)
        current = nil
    }

    @inline(never)
    mutating func report(_ event: CentralEvent, _ host: inout Host) {
        // Stopped by a signal: the link is being closed on purpose; what the
        // session says about that is not an outcome of the question.
        let stopped = Signals.stopReceived != 0
        switch event {
        case .found(let entry):
            if session.settings.listOnly {
                printer.found(entry)
            } else {
                printer.peerName = entry.summary.nameString
                printer.peerAddress = entry.address
                printer.rssi = Int(entry.rssi)
                Log.info("found 8-Ball \"\(escaped: entry.summary.name)\" at \(entry.address), RSSI \(entry.rssi) dBm")
            }
        case .listFull(let count):
            Log.info("listed \(count) 8-Balls: from now on the oldest is forgotten to make room, and listed again if heard again")
        case .connected(let address):
            Log.debug("connected to \(address)")
        case .nameRead(let connection, let found):
            nameRead(connection, found: found, &host, now: host.now)
        case .ready(let mtu):
            Log.info("8-Ball ready (MTU \(mtu))")
            everReady = true
        case .answered(let answer, let value, let latency):
            // (The question read here only: a copy made before the switch was
            // retained and released on every other path.)
            printer.answered(question: current ?? "", answer: answer, value: value, latency: latency)
            counts.answered += 1
            counts.latency.observe(microseconds: Int(latency) * 1000)
            current = nil
        case .rejected:
            counts.rejected += 1
            questionFailed("rejected", "please rephrase as a question", Exit.rejected)
        case .failed(let code):
            guard !stopped else { break }
            questionFailed("att_error", "the 8-Ball refused the question (ATT error 0x\(hexByte: code))", Exit.failure)
        case .offline:
            guard !stopped else { break }
            counts.timedOut += 1
            questionFailed("offline", "device offline", Exit.timeout)
        case .notFound:
            guard !stopped else { break }
            counts.notFound += 1
            if namesakes.count > 1, !refusedPeer {
                refusePeer(&host)
            } else if source.fromStdin, everReady {
                // The 8-Ball went away mid-session and this question did not
                // find it again: offline; the next one looks for it again.
                if LogLevel.warning <= Log.level {
                    var line = BuiltText.Builder()
                    line.appendLiteral("the 8-Ball was not found again")
                    appendWithin(&line)
                    line.appendLiteral("; the next question looks for it again")
                    Log.emit(.warning, BuiltText(line))
                }
                questionFailed("offline", "device offline", Exit.timeout)
                restartPending = true
            } else if controllerLost {
                Log.error("controller at \(controllerName) stopped answering HCI commands while scanning; nothing could be heard")
                printer.fail(Exit.controller)
            } else {
                logNotFound(.error)
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
                logNotFound(.error)
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

    mutating func addCounts(to counts: inout MetricCounts) { counts.central.add(self.counts) }

    /// What was looked for and what was seen instead, in words: each line
    /// logged as it is built (no array of Strings), in one place for the three callers.
    @inline(never)
    func logNotFound(_ level: LogLevel) {
        // Built as bytes (BuiltText): String appends are inlined at every use.
        let settings = session.settings
        var first = BuiltText.Builder()
        first.appendLiteral("no 8-Ball found")
        appendWithin(&first)
        first.appendLiteral("; looked for a device advertising the 8-Ball service and a name")
        if let peerName {
            first.appendLiteral(", named \"")
            first.appendInterpolation(escaped: peerName)
            first.appendLiteral("\" (any case)")
        } else if let address = settings.peerAddress {
            first.appendLiteral(", at ")
            first.appendInterpolation(BDAddress(value: address, type: 0))
        }
        if settings.rssiWindow {
            first.appendLiteral(", signal from ")
            first.appendInterpolation(settings.rssiMin)
            first.appendLiteral(" to ")
            first.appendInterpolation(settings.rssiMax)
            first.appendLiteral(" dBm (--rssi-min/--rssi-max)")
        }
        Log.emit(level, BuiltText(first))
        if seen.count == 0 {
            Log.emit(level, "seen: nothing at all; is the 8-Ball on, in range, and this the right controller?" as BuiltText)
        }
        for index in 0..<seen.count { logEntry(level, "seen: ", seen.entries[index], whyNot: true) }
    }

    /// An advertiser's line, "candidate: …" or "seen: …: why not", logged as
    /// it is built: one writer for refusePeer's and logNotFound's lines.
    @inline(never)
    func logEntry(_ level: LogLevel, _ label: StaticString, _ entry: ScanEntry, whyNot: Bool) {
        var line = BuiltText.Builder()
        line.appendLiteral(label)
        describe(entry, into: &line)
        if whyNot {
            line.appendLiteral(": ")
            self.whyNot(entry, into: &line)
        }
        Log.emit(level, BuiltText(line))
    }

    /// " within 5 s": how long the scan looked (nothing when it ran until stopped).
    @inline(never)
    func appendWithin(_ line: inout BuiltText.Builder) {
        guard let scanSeconds else { return }
        line.appendLiteral(" within ")
        line.appendInterpolation(formatNumber(scanSeconds))
        line.appendLiteral(" s")
    }

    /// Why a device seen is not the 8-Ball wanted (mirrors EightBallCentral's filter),
    /// appended to its line (no BuiltText of its own per reason).
    func whyNot(_ entry: ScanEntry, into line: inout BuiltText.Builder) {
        let settings = session.settings
        if !entry.summary.hasService(EightBallUUID.service) { return line.appendLiteral("not an 8-Ball (no 8-Ball service)") }
        if entry.summary.name.isEmpty { return line.appendLiteral("an 8-Ball service but no name") }
        if settings.rssiWindow, entry.rssi == 127 || entry.rssi < settings.rssiMin || entry.rssi > settings.rssiMax {
            line.appendLiteral("signal outside ")
            line.appendInterpolation(settings.rssiMin)
            line.appendLiteral("…")
            line.appendInterpolation(settings.rssiMax)
            return line.appendLiteral(" dBm")
        }
        if let other = otherNames.first(where: { $0.address == entry.address.value }) {
            line.appendLiteral("not named \"")
            line.appendInterpolation(escaped: peerName ?? "")
            line.appendLiteral("\": its full name, read over GATT, ")
            if other.name.isEmpty { return line.appendLiteral("cannot be read (no GAP Device Name)") }
            line.appendLiteral("is \"")
            line.appendInterpolation(other.name)
            return line.appendLiteral("\"")
        }
        if let peerName {
            let (same, beginsLike) = CentralLogic.compareNames(entry.summary.nameString, peerName)
            if !same, !(entry.heardScanResponse && beginsLike) {
                line.appendLiteral("not named \"")
                line.appendInterpolation(escaped: peerName)
                if !entry.summary.nameIsComplete, !entry.heardScanResponse, beginsLike {
                    return line.appendLiteral("\" as far as heard: its advertising data has the shortened name and no scan response (which carries the full name) was heard")
                }
                return line.appendLiteral("\"")
            }
        }
        if peerName == nil, let address = settings.peerAddress, entry.address.value != address { return line.appendLiteral("not the --peer address") }
        if !entry.connectable, !settings.listOnly { return line.appendLiteral("not connectable") }
        if !entry.summary.nameIsComplete, !entry.heardScanResponse {
            return line.appendLiteral("its name is shortened and no scan response (the full name) was heard")
        }
        line.appendLiteral("an 8-Ball, but not found in time")
    }

    func logClientEvent(_ event: GATTClientEvent) {
        switch event {
        case .timeout(let connection, let request):
            Log.warning("ATT request 0x\(hexByte: request) on 0x\(hex: connection) timed out; closing the link")
        case .error(_, let request, let handle, let code):
            Log.debug("ATT error 0x\(hexByte: code) for request 0x\(hexByte: request) on attribute 0x\(hex: handle)")
        default:
            break
        }
    }
}

extension AdvertisementSummary {
    /// The name heard as a String (`FixedBytes.string`): out of line, four callers.
    var nameString: String {
        @inline(never) get { name.string }
    }
}

extension CommandLineSettings {
    /// The central's sessions share the questions still to ask and the printer
    /// (and so the exit code) across a USB unplug.
    func centralSession(configuration: HostConfiguration) -> (Session) -> SessionEnd {
        var settings = CentralSettings()
        settings.rssiMin = Int8(rssiMin)
        settings.rssiMax = Int8(rssiMax)
        // --scan without them lists every 8-Ball heard, whatever its signal.
        settings.rssiWindow = !scan || rssiGiven
        // --timeout S is the whole question's time (docs/COMMAND-LINE.md, "--timeout"),
        // and the time to find an 8-Ball when no question waits.
        let seconds = timeout ?? 5
        settings.questionTimeout = UInt64(seconds * 1000)
        // --scan without --timeout: until stopped (Ctrl-C); 100 years will do.
        let scanSeconds: Double? = scan && timeout == nil ? nil : seconds
        settings.scanTimeout = scanSeconds.map { UInt64($0 * 1000) } ?? 3_153_600_000_000
        settings.listOnly = scan
        var peerName: String? = nil
        if let peer {
            if let address = BDAddress(string: peer, type: 0) {
                settings.peerAddress = address.value
            } else {
                peerName = peer
                settings.peerAddress = CentralLogic.unresolvedPeer
                // Listen this long before picking, to hear a second 8-Ball of that name.
                settings.settleTime = min(CentralLogic.peerSettle, settings.questionTimeout / 2)
            }
        }
        let source = QuestionSource(questions: scan ? ["-"] : question, count: count)
        let printer = AnswerPrinter(json: json, interactive: source.interactive)
        return { [scan] session in
            let transport = session.transport
            if LogLevel.info <= Log.level {  // one builder for both roles' first line
                var line = BuiltText.Builder()
                line.appendLiteral(scan ? "scanning for 8-Balls on " : "central on ")
                line.appendInterpolation(transport.description)
                if scan, scanSeconds == nil { line.appendLiteral(" until Ctrl-C") }
                Log.emit(.info, BuiltText(line))
            }
            var loop = session.runLoop(configuration: configuration) { host in
                host.buildDatabase { database in
                    let name: StaticString = "itcb-dongle"
                    _ = database.addGAPAndGATTServices(name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), appearance: 0)
                }
                var logic = CentralLogic(session: EightBallCentral(settings: settings), source: source, printer: printer)
                logic.peerName = peerName
                logic.scanSeconds = scanSeconds
                logic.controllerName = transport.description
                return RoleDispatch(logic)
            }
            loop.extraDescriptor = { source.pollsStdin ? 0 : -1 }
            let end = loop.run()
            guard let stopCode = Signals.stopExitCode else { return end }
            // Stopped by Ctrl-C/SIGTERM: 130/143, after a newline that ends the prompt.
            PromptLine.end()
            // A scan stopped by hand found what it found: no error;
            // what was seen and why each was passed over is for --log-level info.
            if scan, !loop.logic.central.session.reportedAny {
                loop.logic.central.logNotFound(.info)
            }
            return .exit(stopCode)
        }
    }
}
