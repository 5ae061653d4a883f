import CLinux

/// The built-in radio's power line on a Raspberry Pi: the GPIO line named
/// `BT_ON` (the Bluetooth node's `shutdown-gpios` in Raspberry Pi's trees: the
/// firmware GPIO expander's line 0 on the Pi 3 and 4, `<&expgpio 0
/// GPIO_ACTIVE_HIGH>`; the SoC's GPIO 29 on the Pi 5, `<&gio 29 …>`), found
/// by name across the gpiochips and driven through the kernel's GPIO character
/// device (uAPI v2; no sysfs GPIO). Linux's hci_bcm drives it on every open
/// and close of the port (`bcm_gpio_set_power`, then `usleep_range(100000,
/// 120000)` "for device to power on and come out of reset"); BTstack's raspi
/// port cycles it at start (off, `usleep(100000)`, on). Here it is cycled only
/// when the chip answers at neither rate, and as the UART's recovery rung:
/// low, 100 ms, high, 100 ms (Linux's waits, the lower end of its range).
///
/// The gpiochips are looked for in /dev, or in `$ITCB_GPIOCHIP_DIR` (the
/// tests' fake chips). Looked up once, at the first open of a UART.
struct PowerLine {
    static let name = "BT_ON"
    static let consumer: StaticString = "itcb-dongle"
    /// Linux's wait after each change of the line (ms).
    static let settle: Int32 = 100

    /// The line found at start (nil: none, said once).
    nonisolated(unsafe) static var found: PowerLine? = nil
    nonisolated(unsafe) static var lookedUp = false
    /// The line's descriptor once requested (held for the process's life: the
    /// radio stays powered while the program runs); -1 before the first cycle.
    nonisolated(unsafe) static var lineFD: Int32 = -1

    let chip: String
    let offset: UInt32

    var description: String { built("BT_ON (\(escaped: chip) line \(offset))") }

    /// As a C string: opened and printed, never kept.
    static var directory: UnsafePointer<CChar> {
        if let value = environment("ITCB_GPIOCHIP_DIR"), value[0] != 0 { return UnsafePointer(value) }
        return cText("/dev")
    }

    /// What the look-up found, said once the port has opened (`announce`): a
    /// port that cannot be opened is then its one error line.
    nonisolated(unsafe) static var finding: BuiltText? = nil

    /// Looks for the line once, for the UART at `path`, and keeps what it found
    /// as one line: where the radio can be power-cycled, or why not.
    static func lookUp(path: String, tree: DeviceTree) {
        guard !lookedUp else { return }
        lookedUp = true
        var why = BuiltText.Builder()
        if let line = search(tree: tree, why: &why) {
            found = line
            finding = "serial:\(escaped: path): the radio's power line is \(line.description): a chip silent at both rates is power-cycled (low \(settle) ms, high, \(settle) ms) and brought up afresh"
        } else {
            finding = "serial:\(escaped: path): no power line to cycle (\(BuiltText(why))); a chip silent at both rates ends in exit \(Exit.controller)"
        }
    }

    /// Says what `lookUp` found, the first time a port opened.
    static func announce() {
        guard let line = finding else { return }
        finding = nil
        Log.info(line)
    }

    /// The board's `BT_ON` line: on a Raspberry Pi only (elsewhere a line of
    /// that name need not power this radio), the first free one by name; nil
    /// with why not in `why`. The texts go straight into `why`, piece by
    /// piece (no error values with Strings, no list of chip names: 5 KB of
    /// code before; no builder made per text and copied in).
    static func search(tree: DeviceTree, why: inout BuiltText.Builder) -> PowerLine? {
        guard tree.isRaspberryPi else {
            if let board = tree.boardName {
                why.appendInterpolation(escapedBytes: tree.model ?? board)
                why.appendLiteral(" is not a Raspberry Pi")
            } else {
                why.appendLiteral("no device tree at ")
                why.appendInterpolation(escaped: tree.directory)
            }
            return nil
        }
        let dir = directory
        guard let handle = opendir(dir) else {
            why.appendLiteral("cannot read ")
            why.appendInterpolation(escapedC: dir)
            why.appendLiteral(": ")
            why.appendInterpolation(errnoText)
            return nil
        }
        defer { closedir(handle) }
        // gpiochip0, gpiochip1, …, gpiochip10: in the kernel's order (the
        // shorter name first, then byte by byte), the next one found by a pass
        // over the directory each: a few chips, no list kept and sorted.
        let names = UnsafeMutablePointer<CChar>.allocate(capacity: 512)
        defer { names.deallocate() }
        let (last, next) = (names, names + 256)  // d_name: at most 256 bytes with its NUL
        var any = false
        while true {
            rewinddir(handle)
            var found = false
            while let entry = readdir(handle) {
                let name = clinux_dirent_name(entry)!
                guard strncmp(name, cText("gpiochip"), 8) == 0, !any || chipPrecedes(last, name),
                      !found || chipPrecedes(name, next) else { continue }
                strcpy(next, name)
                found = true
            }
            guard found else { break }
            strcpy(last, next)
            any = true
            var path = CPathBuffer()
            path.append(terminated: UnsafeRawPointer(dir).assumingMemoryBound(to: UInt8.self))
            path.append("/")
            path.append(terminated: UnsafeRawPointer(next).assumingMemoryBound(to: UInt8.self))
            if let offset = lineNamed(in: path.pointer, problems: &why) { return PowerLine(chip: String(repairingCString: path.pointer), offset: offset) }
        }
        // A chip that could not be read, or a line held by another, says more than "none".
        if why.bytes.isEmpty {
            why.appendLiteral(any ? "no GPIO line named BT_ON on " : "no gpiochip in ")
            why.appendInterpolation(escapedC: dir)
            if any { why.appendLiteral("/gpiochip*") }
        }
        return nil
    }

    /// gpiochip2 before gpiochip10: the shorter name first, then byte by byte.
    static func chipPrecedes(_ a: UnsafePointer<CChar>, _ b: UnsafePointer<CChar>) -> Bool {
        let (x, y) = (strlen(a), strlen(b))
        guard x == y else { return x < y }
        return strcmp(a, b) < 0
    }

    /// The offset of the line called `BT_ON` on the chip at `path`; nil when
    /// it has none, or when the chip cannot say (then why, after a "; " if
    /// `problems` has some already), written into `problems` piece by piece.
    static func lineNamed(in path: UnsafePointer<CChar>, problems: inout BuiltText.Builder) -> UInt32? {
        let fd = clinux_open(path, O_RDWR | O_CLOEXEC, 0)
        var failure = errnoText
        guard fd >= 0 else {
            let hint: StaticString = failure.code == EACCES || failure.code == EPERM ? " (the service needs DeviceAllow=char-gpiochip rw)" : ""
            nextProblem(&problems, "cannot open ", path)
            problems.appendLiteral(": ")
            problems.appendInterpolation(failure)
            problems.appendLiteral(hint)
            return nil
        }
        defer { sysClose(fd) }
        let lines = clinux_gpiochip_lines(fd)
        failure = errnoText
        guard lines >= 0 else {
            nextProblem(&problems, "", path)
            problems.appendLiteral(" is not a gpiochip: ")
            problems.appendInterpolation(failure)
            return nil
        }
        // The line's name, then its holder, NUL-ended each (GPIO_MAX_NAME_SIZE).
        let size = Int(GPIO_MAX_NAME_SIZE)
        let lineName = UnsafeMutablePointer<CChar>.allocate(capacity: 2 * size)
        defer { lineName.deallocate() }
        let holder = lineName + size
        for offset in 0..<UInt32(lines) {
            var used: Int32 = 0
            guard clinux_gpio_line_info(fd, offset, lineName, holder, &used) == 0 else {
                failure = errnoText
                nextProblem(&problems, "", path)
                problems.appendLiteral(" line ")
                problems.appendInterpolation(offset)
                problems.appendLiteral(": ")
                problems.appendInterpolation(failure)
                return nil
            }
            guard strcmp(lineName, cText("BT_ON")) == 0 else { continue }
            guard used != 0 else { return offset }
            let by = holder[0] == 0 ? cText("another consumer") : UnsafePointer(holder)
            nextProblem(&problems, "BT_ON on ", path)
            problems.appendLiteral(" line ")
            problems.appendInterpolation(offset)
            problems.appendLiteral(" is held by ")
            problems.appendInterpolation(escapedC: by)
            problems.appendLiteral(" (the kernel's Bluetooth driver still has the radio?)")
            return nil
        }
        return nil
    }

    /// A literal as a C string (no String made for the call).
    @inline(__always)
    static func cText(_ literal: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// Starts one chip's problem after the others: "; " if any, `lead`, the chip.
    @inline(never)
    static func nextProblem(_ problems: inout BuiltText.Builder, _ lead: StaticString, _ path: UnsafePointer<CChar>) {
        if !problems.bytes.isEmpty { problems.appendLiteral("; ") }
        problems.appendLiteral(lead)
        problems.appendInterpolation(escapedC: path)
    }

    /// Off, Linux's wait, on, its wait again. Nil when done, else why not.
    func cycle() -> String? {
        if PowerLine.lineFD < 0 {
            let fd = clinux_open(cPath(chip), O_RDWR | O_CLOEXEC, 0)
            guard fd >= 0 else { return built("cannot open \(escaped: chip): \(errnoText)") }
            let line = clinux_gpio_request_output(fd, offset, 0, PowerLine.cText(PowerLine.consumer))
            let failure = errnoText  // before the close
            sysClose(fd)  // the line's descriptor stands on its own
            guard line >= 0 else { return built("cannot request \(description) as an output: \(failure)") }
            PowerLine.lineFD = line
        } else if clinux_gpio_set(PowerLine.lineFD, 0) != 0 {
            return driveFailure("low")
        }
        PowerLine.wait(PowerLine.settle)
        guard clinux_gpio_set(PowerLine.lineFD, 1) == 0 else { return driveFailure("high") }
        PowerLine.wait(PowerLine.settle)
        return nil
    }

    /// The line could not be driven `level` (one text for both).
    @inline(never)
    func driveFailure(_ level: StaticString) -> String { built("cannot drive \(description) \(level): \(errnoText)") }

    /// Sleeps `milliseconds` in full (SIGHUP does not cut it short; a stop does).
    static func wait(_ milliseconds: Int32) {
        let end = monotonicMilliseconds() + UInt64(milliseconds)
        while true {
            let now = monotonicMilliseconds()
            guard now < end, Signals.sleep(Int32(end - now)) != .stop else { return }
        }
    }
}
