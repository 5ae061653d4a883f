import BLEHost
import EightBall
import Glibc

/// Where the central's questions come from: --question (each --count times) or
/// standard input, one per line (a prompt when it is a terminal).
final class QuestionSource {
    var queue: [String]
    let interactive: Bool
    let fromStdin: Bool
    var stdinBuffer: [UInt8] = []
    var stdinClosed = false
    var prompted = false

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

    func prompt() {
        guard interactive, !prompted, queue.isEmpty, !stdinClosed else { return }
        prompted = true
        writeStandardError("Ask the 8-Ball: ")
    }

    /// Reads what stdin has; complete lines become questions (each --count times).
    func readStdin() {
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if n > 0 {
                stdinBuffer += chunk[0..<n]
            } else {
                if n == 0 { stdinClosed = true }
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
        guard !text.trimmingCharacters().isEmpty else { return }
        prompted = false
        queue += Array(repeating: text, count: count)
    }

    func next() -> String? { queue.isEmpty ? nil : queue.removeFirst() }
}

/// Prints answers (text or one JSON object per line) and keeps the exit code.
final class AnswerPrinter {
    let json: Bool
    /// The first failure decides the exit code; 0 when everything was answered.
    var exitCode: Int32 = Exit.success
    var peerName = ""
    var peerAddress = ""
    var rssi: Int = 0

    init(json: Bool) { self.json = json }

    func fail(_ code: Int32) {
        if exitCode == Exit.success { exitCode = code }
    }

    func answered(question: String, answer: Int?, value: String, latency: UInt64) {
        let slug = answer.map { index -> String in
            var buffer = FixedBytes<16>()
            Answers.slug(index, into: &buffer)
            return buffer.string
        }
        let phrase = answer.map { index -> String in
            var buffer = FixedBytes<32>()
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
        } else {
            printLine("\(question) -> \(message)")
        }
    }

    func found(_ entry: ScanEntry) {
        let name = entry.summary.name.string
        if json {
            emit(["name": .string(name), "address": .string(entry.address.string), "rssi": .int(Int(entry.rssi))])
        } else {
            printLine("\(name)\t\(entry.address.string)\t\(entry.rssi) dBm")
        }
    }

    func emit(_ fields: KeyValuePairs<String, JSONValue>) {
        let body = fields.map { "\(jsonString($0.key)):\($0.value.encoded)" }.joined(separator: ",")
        printLine("{\(body)}")
    }
}

enum JSONValue {
    case string(String), int(Int), null
    var encoded: String {
        switch self {
        case .string(let s): jsonString(s)
        case .int(let i): String(i)
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
                out += "\\u00" + hex(UInt8(scalar.value)).lowercased()
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

    mutating func gattRead(connection: UInt16, handle: UInt16, into value: inout AttributeValue) -> UInt8 {
        ATTError.readNotPermitted
    }
    mutating func gattWrite(connection: UInt16, handle: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        ATTError.writeNotPermitted
    }
    mutating func gattSubscriptionChanged(connection: UInt16, valueHandle: UInt16, value: UInt16) {}

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        if case .gattClient(let client) = event { logClientEvent(client) }
        session.handle(event, host: &host, now: now)
    }

    func nextDeadline() -> UInt64? { session.nextDeadline() }

    mutating func poll(host: inout Host, now: UInt64) {
        if !started {
            started = true
            session.start(host: &host, now: now)
        }
        session.tick(host: &host, now: now)
        if !source.descriptors.isEmpty { source.readStdin() }
        while let event = session.nextEvent() { report(event, &host) }
        guard exitCode == nil, !session.settings.listOnly else { return }
        if session.isIdleForQuestion, !finishing {
            if let next = source.next() {
                current = next
                _ = Array(next.utf8).withUnsafeBytes { session.ask($0, host: &host, now: now) }
            } else if source.exhausted {
                finishing = true
                session.finish(host: &host)
            } else {
                source.prompt()
            }
        }
        while let event = session.nextEvent() { report(event, &host) }
    }

    mutating func report(_ event: CentralEvent, _ host: inout Host) {
        let question = current ?? ""
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
        case .ready(let mtu):
            Log.info("8-Ball ready (MTU \(mtu))")
        case .answered(let answer, let value, let latency):
            printer.answered(question: question, answer: answer, value: value.string, latency: latency)
            current = nil
        case .rejected:
            printer.problem(question: question, error: "rejected", message: "please rephrase as a question")
            printer.fail(Exit.rejected)
            current = nil
        case .failed(let code):
            printer.problem(question: question, error: "att_error", message: "the 8-Ball refused the question (ATT error 0x\(hex(code)))")
            printer.fail(Exit.failure)
            current = nil
        case .offline:
            printer.problem(question: question, error: "offline", message: "device offline")
            printer.fail(Exit.timeout)
            current = nil
        case .notFound:
            Log.error("no 8-Ball found (service 8E38140A-…, a name, RSSI \(session.settings.rssiMin)…\(session.settings.rssiMax) dBm)")
            printer.fail(Exit.notFound)
        case .notAnEightBall:
            Log.error("the device found does not offer the 8-Ball service")
            printer.fail(Exit.notFound)
        case .retrying:
            Log.warning("link lost mid-question; asking again on a fresh connection")
        case .scanComplete:
            if printer.exitCode == Exit.success, session.reportedAny == false { printer.fail(Exit.notFound) }
            exitCode = printer.exitCode
        case .finished:
            exitCode = printer.exitCode
        }
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
    mutating func gattRead(connection: UInt16, handle: UInt16, into value: inout AttributeValue) -> UInt8 { ATTError.readNotPermitted }
    mutating func gattWrite(connection: UInt16, handle: UInt16, value: UnsafeRawBufferPointer) -> UInt8 { ATTError.writeNotPermitted }
    mutating func gattSubscriptionChanged(connection: UInt16, valueHandle: UInt16, value: UInt16) {}
    func nextDeadline() -> UInt64? { nil }
    mutating func poll(host: inout Host, now: UInt64) {}

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        guard case .ready(let info) = event, exitCode == nil else { return }
        printLine(controllerInfoText(info))
        exitCode = Exit.success
    }
}

func controllerInfoText(_ info: ControllerInfo) -> String {
    let leFeatureNames: [(Int, String)] = [
        (0, "LE Encryption"), (1, "Connection Parameters Request"), (2, "Extended Reject Indication"),
        (3, "Peripheral-initiated Features Exchange"), (4, "LE Ping"), (5, "LE Data Packet Length Extension"),
        (6, "LL Privacy"), (7, "Extended Scanner Filter Policies"), (8, "LE 2M PHY"), (11, "LE Coded PHY"),
        (12, "LE Extended Advertising"), (13, "LE Periodic Advertising"), (16, "Channel Selection Algorithm #2"),
    ]
    let features = leFeatureNames.filter { info.leFeatures & (1 << UInt64($0.0)) != 0 }.map(\.1)
    return """
    HCI version:    \(coreVersionName(info.hciVersion)) (revision 0x\(String(info.hciRevision, radix: 16)))
    LMP version:    \(coreVersionName(info.lmpVersion)) (subversion 0x\(String(info.lmpSubversion, radix: 16)))
    Manufacturer:   0x\(hex4(info.manufacturer))
    Public address: \(info.publicAddress.string)\(info.publicAddress.isZero ? " (none)" : "")
    Address in use: \(info.address.string) (\(info.address.typeName))
    ACL buffers:    \(info.aclDataLength) bytes x \(info.aclPackets) (\(info.leBuffers ? "LE" : "shared BR/EDR"))
    LE features:    0x\(String(info.leFeatures, radix: 16)) \(features.isEmpty ? "" : "(" + features.joined(separator: ", ") + ")")
    """
}

func hex4(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

extension ITCBDongle {
    /// The central's sessions share the questions still to ask and the printer
    /// (and so the exit code) across a USB unplug.
    func centralSession(configuration: HostConfiguration) -> (Transport, BTSnoopWriter?, Int) -> Int32 {
        var settings = CentralSettings()
        settings.rssiMin = Int8(rssiMin)
        settings.rssiMax = Int8(rssiMax)
        settings.answerTimeout = UInt64(timeout * 1000)
        settings.scanTimeout = max(UInt64(timeout * 1000), 3_000)
        settings.listOnly = scan
        if let peer {
            if let address = BDAddress(string: peer, type: 0) {
                settings.peerAddress = address.value
            } else {
                settings.peerName = Array(peer.utf8.prefix(31)).withUnsafeBytes { FixedBytes($0) }
            }
        }
        let source = QuestionSource(questions: scan ? ["-"] : question, count: count)
        let printer = AnswerPrinter(json: json)
        return { [scan] transport, snoop, _ in
            let logic = CentralLogic(session: EightBallCentral(settings: settings), source: source, printer: printer)
            var database = GATTDatabase()
            _ = Array("itcb-dongle".utf8).withUnsafeBytes { database.addGAPAndGATTServices(name: $0, appearance: 0) }
            Log.info(scan ? "scanning for 8-Balls on \(transport.description)" : "central on \(transport.description)")
            var loop = RunLoop(
                host: Host(configuration: configuration, database: database), logic: logic, transport: transport, snoop: snoop)
            loop.extraDescriptor = { source.descriptors.first?.fd ?? -1 }
            return loop.run()
        }
    }
}
