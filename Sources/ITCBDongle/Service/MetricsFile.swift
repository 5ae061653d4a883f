import CLinux
import BLEHost
import Chipsets

/// --metrics-file: the Prometheus text exposition format (version 0.0.4) for
/// node_exporter's textfile collector, written every `period` from the run
/// loop (a deadline like the watchdog's, no thread) and when a session ends.
/// Each write goes to a temporary file in the same directory, then rename(2)
/// replaces the file, so a scrape never reads half of one. No fsync: a reader
/// needs the rename only, and an SD card is spared a flush every 15 s.
///
/// Allocation-free once running: the text is built in one buffer reserved at
/// start, the labels and paths are made once. A failed write (directory
/// missing, read-only) is warned about once and the 8-Ball serves on.
final class MetricsFile {
    static let period: UInt64 = 15_000
    /// The file and its temporary beside it, as C strings made once: each
    /// open/rename/unlink with a String converted it again (utf8CString).
    let path: [CChar]
    let temporary: [CChar]
    /// `{transport="usb:1-1.2"`, the instance's label, without the closing brace.
    let labels: [UInt8]
    /// Made empty with its room (16 KB) at once: a reserveCapacity after inlined its copy path.
    var buffer = [UInt8](unsafeUninitializedCapacity: 16384) { _, count in count = 0 }
    /// Unix time the process started, seconds.
    let startTime: Int
    let isCentral: Bool
    /// Every ended session's counts.
    var carried = MetricCounts()
    /// The latest session's vendor set-up: which firmware it loaded, if any
    /// (a C string: the label's writer reads bytes up to their end).
    var firmwareVendor = cPath("none")
    var firmwareLoaded = false
    var failing = false
    /// itcb_dongle_info's labels after `transport`: the process's (name,
    /// version, role), then the controller's (chipset, firmware, address), made
    /// once per session when it is ready (`identify`).
    let processInfo: [UInt8]
    var controllerInfo: [UInt8] = []
    var identified = false

    init(path: String, transport: String, name: String, role: RoleOption) {
        let file = cPath(path)
        self.path = file
        // Hidden and not *.prom: the collector never reads a half-written one.
        // `dir/.file.prom.tmp`: the bytes up to the last "/", a dot, the rest, ".tmp".
        var slash = file.count - 1
        while slash > 0, file[slash - 1] != 0x2F { slash -= 1 }
        // One pass into one buffer (insert and an appended array literal were generic code).
        let suffix: StaticString = ".tmp"
        self.temporary = [CChar](unsafeUninitializedCapacity: file.count + 5) { out, count in
            for i in 0..<file.count - 1 { out[i < slash ? i : i + 1] = file[i] }
            out[slash] = 0x2E
            UnsafeMutableRawPointer(out.baseAddress! + file.count).copyMemory(from: suffix.utf8Start, byteCount: 5)  // ".tmp" and its NUL
            count = file.count + 5
        }
        labels = MetricsFile.labelText("{transport", transport)
        var info: [UInt8] = []
        MetricsFile.appendLabel(",name", name, to: &info)
        MetricsFile.appendLabel(",version", itcbDongleVersion, to: &info)
        MetricsFile.appendLabel(",role", role.rawValue, to: &info)
        processInfo = info
        controllerInfo = (",chipset=\"\",firmware=\"\",address=\"\"" as BuiltText).bytes
        isCentral = role == .central
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        startTime = Int(now.tv_sec)
    }

    /// `name="value"` (name given with its leading `,` or `{`), the value escaped.
    static func labelText(_ name: StaticString, _ value: String) -> [UInt8] {
        var bytes: [UInt8] = []
        appendLabel(name, value, to: &bytes)
        return bytes
    }

    @inline(never)
    static func appendLabel(_ name: StaticString, _ value: String, to bytes: inout [UInt8]) {
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "="))
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A label value as the text format wants it: backslash, quote and newline escaped.
    static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        // Over its bytes where they lie: iterating `utf8` inlines String's slow paths.
        withBytes(text) { utf8 in
            for byte in utf8 {
                let newline = byte == UInt8(ascii: "\n")
                if newline || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(newline ? UInt8(ascii: "n") : byte)
            }
        }
    }

    /// The session's controller is up: what it is, for itcb_dongle_info (once a session).
    /// (The chipset's description as the table gives it: its label is all this needs.)
    func identify(_ controller: ControllerInfo, chipset description: ChipsetDescription?) {
        identified = true
        let chipset = description.map { text($0.label).escaped } ?? companyName(controller.manufacturer)
        var labels: [UInt8] = []
        MetricsFile.appendLabel(",chipset", chipset, to: &labels)
        // Hex digits and an address: nothing in them to escape.
        let rest: BuiltText = ",firmware=\"0x\(hex4: controller.lmpSubversion)\",address=\"\(controller.address)\""
        labels.append(contentsOf: rest.bytes)
        controllerInfo = labels
    }

    /// A session ended: its counts become part of the process's, written at once
    /// (the controller is gone or being reopened: nothing advertises or answers).
    func endSession(_ session: MetricCounts) {
        carried.add(session)
        identified = false
        write(MetricGauges(), session: MetricCounts())
    }

    /// The process ends (any exit it reaches): `itcb_dongle_up 0`, the counts kept.
    func processEnds() {
        var gauges = MetricGauges()
        gauges.up = false
        write(gauges, session: MetricCounts())
    }

    /// The session's chipset set-up finished: what it loaded (the chipset
    /// table's facts; a chipset that says nothing at info level loaded nothing).
    func noteFirmware(_ description: ChipsetDescription?) {
        firmwareLoaded = description?.summaryLevel == .info
        firmwareVendor = cPath(firmwareLoaded ? description.map { DongleQuery.family($0.info) } ?? "none" : "none")
    }

    func write(_ gauges: MetricGauges, session: MetricCounts) {
        var total = carried
        total.add(session)
        render(total, gauges)
        // O_NONBLOCK: a FIFO left at the name fails (ENXIO, warned) instead of holding the loop.
        let fd = clinux_open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard fd >= 0 else { return failed("create") }
        // The unit's UMask=0077 would leave it unreadable to node_exporter's user.
        _ = fchmod(fd, 0o644)
        var done = 0
        var error: Int32 = 0
        buffer.withUnsafeBytes { bytes in
            while done < bytes.count {
                let n = sysWrite(fd, bytes.baseAddress! + done, bytes.count - done)
                if n < 0, errno == EINTR { continue }
                if n <= 0 {
                    error = n < 0 ? errno : ENOSPC
                    break
                }
                done += n
            }
        }
        sysClose(fd)
        if error != 0 {
            errno = error
            _ = unlink(temporary)
            return failed("write")
        }
        guard rename(temporary, path) == 0 else {
            let why = errno
            _ = unlink(temporary)
            errno = why
            return failed("rename", renaming: true)
        }
        if failing {
            failing = false
            Log.info("metrics: \(cString: path) written again")
        }
    }

    /// Warned once per run of failures; the appliance serves on.
    /// `cannot VERB TEMPORARY[ to PATH]`: the three failures' line built here once.
    @inline(__always)
    func failed(_ verb: StaticString, renaming: Bool = false) { failedText(verb.utf8Start, renaming) }

    @inline(never)
    func failedText(_ verb: UnsafePointer<UInt8>, _ renaming: Bool) {
        guard !failing else { return }
        // strerror's text straight in: no String for it.
        let why = UnsafeRawPointer(strerror(errno)!).assumingMemoryBound(to: UInt8.self)
        failing = true
        var line = BuiltText.Builder()
        line.appendLiteral("metrics: cannot ")
        line.appendTerminated(verb)
        line.appendLiteral(" ")
        line.appendInterpolation(cString: temporary)
        if renaming {
            line.appendLiteral(" to ")
            line.appendInterpolation(cString: path)
        }
        line.appendLiteral(": ")
        line.appendTerminated(why)
        line.appendLiteral("; serving on without the metrics file (tried again every ")
        line.appendInterpolation(Int(MetricsFile.period / 1000))
        line.appendLiteral(" s)")
        Log.warning(BuiltText(line))
    }

    // MARK: - The text

    /// Every family written, one line each in `Family`'s order: its name, its
    /// type and its help text, read from here as the file is built (a name,
    /// type and help passed at each call were three registers each).
    static let families: StaticString = """
        itcb_dongle_up gauge 1 while the process runs; 0 written as it exits (the file stays, with its last counts).
        itcb_dongle_info gauge The instance: its name, version, role, and its controller's chipset, firmware build (LMP subversion) and address; always 1.
        itcb_dongle_controller_answering gauge 1 when the controller answered an HCI command within the last two probe periods (--health-check, the watchdog's, else 15 s).
        itcb_dongle_advertising gauge 1 while the controller advertises the 8-Ball (it stops while --max-centrals are connected).
        itcb_dongle_questions_answered_total counter Questions answered by the 8-Ball.
        itcb_dongle_questions_rejected_total counter Writes rejected as not a question (ATT error 0x0E).
        itcb_dongle_centrals_connected gauge Centrals connected now.
        itcb_dongle_connections_total counter Centrals that connected, in all.
        itcb_dongle_answer_latency_seconds histogram From a question's write received to its answer's notification queued (stage queued) and to the controller's Number of Completed Packets for it (stage sent).
        itcb_dongle_central_questions_asked_total counter Central: questions asked (each then answered, rejected, timed out, refused otherwise, or no 8-Ball found).
        itcb_dongle_central_questions_answered_total counter Central: questions answered.
        itcb_dongle_central_questions_rejected_total counter Central: questions rejected (ATT error 0x0E).
        itcb_dongle_central_questions_timed_out_total counter Central: questions with no answer in time (device offline).
        itcb_dongle_central_not_found_total counter Central: searches that found no 8-Ball.
        itcb_dongle_central_answer_latency_seconds histogram Central: from a question's write to its answer's notification.
        itcb_dongle_controller_recoveries_total counter Times the controller was reset and brought up again, by what called for it (framing_loss: every time the H4 stream was out of sync).
        itcb_dongle_dropped_packets_total counter Packets dropped, by direction (in: from the controller or a peer; out: a full queue) and reason.
        itcb_dongle_usb_stalls_total counter USB endpoint stalls (halt cleared).
        itcb_dongle_usb_babble_total counter USB transfers dropped for babble (the device sent too much).
        itcb_dongle_firmware_loaded gauge 1 when the vendor set-up loaded firmware into the controller (vendor: the chipset's, lowercase, or none).
        itcb_dongle_start_time_seconds gauge Start time of the process since the Unix epoch, seconds.
        itcb_dongle_written_time_seconds gauge When this file was written, since the Unix epoch, seconds (every 15 s while running).
        """

    /// A line of `families`.
    enum Family: Int {
        case up, info, answering, advertising, answered, rejected, connected, connections, answerLatency
        case centralAsked, centralAnswered, centralRejected, centralTimedOut, centralNotFound, centralLatency
        case recoveries, dropped, usbStalls, usbBabble, firmwareLoaded, startTime, writtenTime
    }

    func render(_ counts: MetricCounts, _ gauges: MetricGauges) {
        buffer.removeSubrange(0 ..< buffer.count)  // capacity kept (one replaceSubrange call)
        one(.up, gauges.up ? 1 : 0)
        family(.info)
        begin(.info)
        buffer.append(contentsOf: processInfo)
        buffer.append(contentsOf: controllerInfo)
        end(1)
        one(.answering, gauges.answering ? 1 : 0)
        if isCentral {
            renderCentral(counts.central)
        } else {
            renderPeripheral(counts, gauges)
        }
        family(.recoveries)
        var kinds = MetricCounts.recoveryKinds.utf8Start
        for i in 0..<4 {
            begin(.recoveries)
            label("kind", &kinds)
            end(counts.recoveries[i])
        }
        family(.dropped)
        // The seven reasons in, then the three out.
        var reasons = MetricCounts.dropReasons.utf8Start
        for i in 0..<10 {
            begin(.dropped)
            label("direction", (i < 7 ? "in" as StaticString : "out").utf8Start)
            label("reason", &reasons)
            end(i < 7 ? counts.droppedIn[i] : counts.droppedOut[i - 7])
        }
        one(.usbStalls, counts.usbStalls)
        one(.usbBabble, counts.usbBabble)
        family(.firmwareLoaded)
        begin(.firmwareLoaded)
        _ = firmwareVendor.withUnsafeBytes { label("vendor", $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        end(firmwareLoaded ? 1 : 0)
        one(.startTime, startTime)
        // A killed or hung instance cannot write up 0: its file stops being rewritten, which this says
        // beside the instance's own labels (node_textfile_mtime_seconds has only the file's name).
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        one(.writtenTime, Int(now.tv_sec))
    }

    func renderPeripheral(_ counts: MetricCounts, _ gauges: MetricGauges) {
        one(.advertising, gauges.advertising ? 1 : 0)
        one(.answered, counts.answered)
        one(.rejected, counts.rejected)
        one(.connected, gauges.connected)
        one(.connections, counts.connections)
        family(.answerLatency)
        histogram(.answerLatency, counts.answerQueued, stage: "queued")
        histogram(.answerLatency, counts.answerSent, stage: "sent")
    }

    func renderCentral(_ counts: CentralCounts) {
        one(.centralAsked, counts.asked)
        one(.centralAnswered, counts.answered)
        one(.centralRejected, counts.rejected)
        one(.centralTimedOut, counts.timedOut)
        one(.centralNotFound, counts.notFound)
        family(.centralLatency)
        histogram(.centralLatency, counts.latency)
    }

    /// The start of `family`'s line in `families`: its name.
    @inline(never)
    func line(_ family: Family) -> UnsafePointer<UInt8> {
        var p = MetricsFile.families.utf8Start
        var lines = family.rawValue
        while lines > 0 {
            if p.pointee == UInt8(ascii: "\n") { lines -= 1 }
            p += 1
        }
        return p
    }

    /// The bytes from `p` up to `stop` (or the text's end) appended; where they stopped.
    @discardableResult
    @inline(never)
    func append(from p: UnsafePointer<UInt8>, to stop: UInt8) -> UnsafePointer<UInt8> {
        var p = p
        while p.pointee != stop && p.pointee != 0 {
            buffer.append(p.pointee)
            p += 1
        }
        return p
    }

    /// The word after the one at `p` (space-separated).
    static func next(after p: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
        var p = p
        while p.pointee != UInt8(ascii: " ") { p += 1 }
        return p + 1
    }

    /// `# HELP name help` and `# TYPE name type`, from the family's line.
    @inline(never)
    func family(_ family: Family) {
        let name = line(family), type = MetricsFile.next(after: name)
        append("# HELP ")
        append(from: name, to: UInt8(ascii: " "))
        append(" ")
        append(from: MetricsFile.next(after: type), to: UInt8(ascii: "\n"))
        append("\n# TYPE ")
        append(from: name, to: UInt8(ascii: " "))
        append(" ")
        append(from: type, to: UInt8(ascii: " "))
        append("\n")
    }

    /// A family of one sample without labels of its own: HELP, TYPE and `name{transport="…"} value`.
    @inline(never)
    func one(_ family: Family, _ value: Int) {
        self.family(family)
        begin(family)
        end(value)
    }

    /// `name_bucket{…,le="…"}` for each bound and +Inf (cumulative), `name_sum` (seconds), `name_count`.
    func histogram(_ family: Family, _ histogram: LatencyHistogram, stage: StaticString? = nil) {
        let stage = stage?.utf8Start
        var cumulative = 0
        var bounds = LatencyHistogram.boundText.utf8Start
        for i in 0...LatencyHistogram.bucketCount {
            cumulative += histogram.buckets[i]
            begin(family, "_bucket")
            if let stage { label("stage", stage) }
            label("le", &bounds)
            end(cumulative)
        }
        begin(family, "_sum")
        if let stage { label("stage", stage) }
        append("} ")
        appendDecimal(histogram.sum / 1_000_000)
        append(".")
        // The microseconds: six digits, leading zeros kept (an InlineArray
        // of digits here cost 800 bytes of code).
        let fraction = histogram.sum % 1_000_000
        var divisor = 100_000
        while divisor > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
        append("\n")
        begin(family, "_count")
        if let stage { label("stage", stage) }
        end(histogram.count)
    }

    /// `name{transport="…"`: a sample's start.
    @inline(__always)
    func begin(_ family: Family) { beginText(family, nil) }

    @inline(__always)
    func begin(_ family: Family, _ suffix: StaticString) { beginText(family, suffix.utf8Start) }

    @inline(never)
    func beginText(_ family: Family, _ suffix: UnsafePointer<UInt8>?) {
        append(from: line(family), to: UInt8(ascii: " "))
        if let suffix { buffer.appendTerminated(suffix) }
        buffer.append(contentsOf: labels)
    }

    /// `} value` and the line's end.
    func end(_ value: Int) {
        append("} ")
        appendDecimal(value)
        append("\n")
    }

    /// `,name="value"`, the value's bytes up to a space or their end (values
    /// here are the program's own: nothing to escape); where they stopped.
    /// Every label of the file is written here.
    @inline(__always) @discardableResult
    func label(_ name: StaticString, _ value: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> { writeLabel(name.utf8Start, value) }

    @inline(never)
    func writeLabel(_ name: UnsafePointer<UInt8>, _ value: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
        append(",")
        buffer.appendTerminated(name)
        append("=\"")
        let stop = append(from: value, to: UInt8(ascii: " "))
        append("\"")
        return stop
    }

    /// `,name="word"`: the next of space-separated `words`, which then point past it.
    @inline(__always)
    func label(_ name: StaticString, _ words: inout UnsafePointer<UInt8>) { words = label(name, words) + 1 }

    @inline(__always)
    func append(_ text: StaticString) { buffer.appendTerminated(text.utf8Start) }

    func appendDecimal(_ value: Int) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var (digits, count) = decimalDigits(value)
        while count > 0 {
            count -= 1
            buffer.append(digits[count])
        }
    }
}

/// The instance's state now, beside its counts: `up` false only in the last write of a process.
struct MetricGauges {
    var up = true
    var connected = 0
    var advertising = false
    var answering = false
}

/// The run loop's side: every `MetricsFile.period`, the file and systemd's
/// status line; at the session's end, its counts kept and written.
extension RunLoop where Logic: ~Copyable {
    /// nil when neither a metrics file nor systemd wants the counts.
    var reportDeadline: UInt64? {
        if metrics == nil && notifier == nil { return nil }
        return observer.connectionsChanged ? 0 : nextReport
    }

    mutating func sessionCounts() -> MetricCounts {
        var counts = MetricCounts(host: driver.host, driverDropped: driver.droppedPackets, framingLosses: driver.framingResets,
                                  transport: transport)
        driver.app.addCounts(to: &counts)
        return counts
    }

    /// Also right after a central came or went (after the notifier's own line, which this one replaces).
    /// Out of line: every 15 s at most, not each wake-up's work.
    @inline(never)
    mutating func report(now: UInt64) {
        observer.connectionsChanged = false
        guard metrics != nil || notifier != nil else { return nextReport = UInt64.max }
        nextReport = now + MetricsFile.period
        let connected = driver.host.connectionCount
        let session = sessionCounts()
        if let metrics {
            if !metrics.identified, driver.host.isReady {
                metrics.identify(driver.host.controller, chipset: driver.setup.describe())
            }
            var gauges = MetricGauges()
            gauges.connected = connected
            gauges.advertising = observer.advertising
            gauges.answering = now < driver.lastAnswer + 2 * (driver.settings.healthInterval ?? MetricsFile.period)
            metrics.write(gauges, session: session)
        }
        if let notifier, notifier.readySent, driver.host.configuration.role == .peripheral {
            var total = metrics?.carried ?? MetricCounts()
            total.add(session)
            notifier.status(total.statusLine(connected: connected))
        }
    }

    mutating func endMetrics() {
        metrics?.endSession(sessionCounts())
    }
}

/// --metrics-file's value: a file node_exporter's textfile collector reads
/// (*.prom); whether its directory is there is the run's business (warned).
func checkMetricsFile(_ path: String, from source: String = "--metrics-file") throws(UsageError) {
    guard path.hasByteSuffix(".prom"), !path.hasByteSuffix("/.prom") else {
        throw UsageError("\(source) must name a file ending in .prom, which node_exporter's textfile collector reads", got: path)
    }
    var status = stat()
    if stat(cPath(path), &status) == 0, status.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) {
        throw UsageError("\(source) must name a file, not a directory", got: path)
    }
}
