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
    let path: String
    let temporary: String
    /// `{transport="usb:1-1.2"`, the instance's label, without the closing brace.
    let labels: [UInt8]
    var buffer: [UInt8] = []
    /// Unix time the process started, seconds.
    let startTime: Int
    /// Every ended session's counts.
    var carried = MetricCounts()
    /// The latest session's vendor set-up: which firmware it loaded, if any.
    var firmwareVendor = "none"
    var firmwareLoaded = false
    var failing = false

    init(path: String, transport: String) {
        self.path = path
        // Hidden and not *.prom: the collector never reads a half-written one.
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        temporary = directory + "." + name + ".tmp"
        var labels = Array("{transport=\"".utf8)
        MetricsFile.appendEscaped(transport, to: &labels)
        labels.append(UInt8(ascii: "\""))
        self.labels = labels
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        startTime = Int(now.tv_sec)
        buffer.reserveCapacity(8192)
    }

    /// A label value as the text format wants it: backslash, quote and newline escaped.
    static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            default: bytes.append(byte)
            }
        }
    }

    /// A session ended: its counts become part of the process's, written at once
    /// (the last write of a process that exits).
    func endSession(_ session: MetricCounts) {
        carried.add(session)
        write(connected: 0, session: MetricCounts())
    }

    /// The session's chipset set-up finished: what it loaded (the chipset
    /// table's facts; a chipset that says nothing at info level loaded nothing).
    func noteFirmware(_ facts: ChipsetFacts?) {
        firmwareLoaded = facts?.summaryLevel == .info
        firmwareVendor = firmwareLoaded ? facts.map { asciiLowercase($0.info.vendor) } ?? "none" : "none"
    }

    /// The vendor names are ASCII: String.lowercased() would link the Unicode case tables (about 20 KB).
    func asciiLowercase(_ name: StaticString) -> String {
        let bytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    func write(connected: Int, session: MetricCounts) {
        var total = carried
        total.add(session)
        render(total, connected: connected)
        // O_NONBLOCK: a FIFO left at the name fails (ENXIO, warned) instead of holding the loop.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard fd >= 0 else { return failed("cannot create \(temporary)") }
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
            return failed("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let why = errno
            _ = unlink(temporary)
            errno = why
            return failed("cannot rename \(temporary) to \(path)")
        }
        if failing {
            failing = false
            Log.info("metrics: \(path) written again")
        }
    }

    /// Warned once per run of failures; the appliance serves on.
    func failed(_ what: String) {
        guard !failing else { return }
        failing = true
        Log.warning("metrics: \(what): \(errnoString()); serving on without the metrics file (tried again every \(MetricsFile.period / 1000) s)")
    }

    // MARK: - The text

    func render(_ counts: MetricCounts, connected: Int) {
        buffer.removeAll(keepingCapacity: true)
        family("itcb_dongle_questions_answered_total", "counter", "Questions answered by the 8-Ball.")
        sample("itcb_dongle_questions_answered_total", counts.answered)
        family("itcb_dongle_questions_rejected_total", "counter", "Writes rejected as not a question (ATT error 0x0E).")
        sample("itcb_dongle_questions_rejected_total", counts.rejected)
        family("itcb_dongle_centrals_connected", "gauge", "Centrals connected now.")
        sample("itcb_dongle_centrals_connected", connected)
        family("itcb_dongle_connections_total", "counter", "Centrals that connected, in all.")
        sample("itcb_dongle_connections_total", counts.connections)
        family("itcb_dongle_controller_recoveries_total", "counter",
               "Times the controller was reset and brought up again, by what called for it (framing_loss: every time the H4 stream was out of sync).")
        for (i, kind) in MetricCounts.recoveryKinds.enumerated() {
            sample("itcb_dongle_controller_recoveries_total", counts.recoveries[i], "kind", kind)
        }
        family("itcb_dongle_dropped_packets_total", "counter",
               "Packets dropped, by direction (in: from the controller or a peer; out: a full queue) and reason.")
        for (i, reason) in MetricCounts.inputReasons.enumerated() {
            sample("itcb_dongle_dropped_packets_total", counts.droppedIn[i], "direction", "in", "reason", reason)
        }
        for (i, reason) in MetricCounts.outputReasons.enumerated() {
            sample("itcb_dongle_dropped_packets_total", counts.droppedOut[i], "direction", "out", "reason", reason)
        }
        family("itcb_dongle_usb_stalls_total", "counter", "USB endpoint stalls (halt cleared).")
        sample("itcb_dongle_usb_stalls_total", counts.usbStalls)
        family("itcb_dongle_usb_babble_total", "counter", "USB transfers dropped for babble (the device sent too much).")
        sample("itcb_dongle_usb_babble_total", counts.usbBabble)
        family("itcb_dongle_firmware_loaded", "gauge",
               "1 when the vendor set-up loaded firmware into the controller (vendor: the chipset's, lowercase, or none).")
        sample("itcb_dongle_firmware_loaded", firmwareLoaded ? 1 : 0, "vendor", firmwareVendor)
        family("itcb_dongle_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, seconds.")
        sample("itcb_dongle_start_time_seconds", startTime)
    }

    func family(_ name: StaticString, _ type: StaticString, _ help: StaticString) {
        append("# HELP ")
        append(name)
        append(" ")
        append(help)
        append("\n# TYPE ")
        append(name)
        append(" ")
        append(type)
        append("\n")
    }

    /// `name{transport="…",label="value",…} value`.
    func sample(_ name: StaticString, _ value: Int, _ label: StaticString? = nil, _ labelValue: String = "",
                _ label2: StaticString? = nil, _ value2: String = "") {
        append(name)
        buffer.append(contentsOf: labels)
        if let label { self.label(label, labelValue) }
        if let label2 { self.label(label2, value2) }
        append("} ")
        appendDecimal(value)
        append("\n")
    }

    /// `,name="value"` (values here are the program's own: nothing to escape).
    func label(_ name: StaticString, _ value: String) {
        append(",")
        append(name)
        append("=\"")
        buffer.append(contentsOf: value.utf8)
        append("\"")
    }

    func append(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    func appendDecimal(_ value: Int) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var (digits, count) = decimalDigits(value)
        while count > 0 {
            count -= 1
            buffer.append(digits[count])
        }
    }
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
        let questions = driver.app.questionCounts
        return MetricCounts(host: driver.host, driverDropped: driver.droppedPackets, framingLosses: driver.framingResets, transport: transport,
                            answered: questions.answered, rejected: questions.rejected)
    }

    /// Also right after a central came or went (after the notifier's own line, which this one replaces).
    mutating func report(now: UInt64) {
        observer.connectionsChanged = false
        guard metrics != nil || notifier != nil else { return nextReport = UInt64.max }
        nextReport = now + MetricsFile.period
        let connected = driver.host.connectionCount
        let session = sessionCounts()
        metrics?.write(connected: connected, session: session)
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
    guard path.hasSuffix(".prom"), !path.hasSuffix("/.prom") else {
        throw UsageError("\(source) must name a file ending in .prom, which node_exporter's textfile collector reads (got '\(path.escaped)')")
    }
    var status = stat()
    if stat(path, &status) == 0, status.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) {
        throw UsageError("\(source) must name a file, not a directory (got '\(path.escaped)')")
    }
}
