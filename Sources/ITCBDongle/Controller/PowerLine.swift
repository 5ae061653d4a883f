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
    static let consumer = "itcb-dongle"
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

    var description: String { built("\(PowerLine.name) (\(escaped: chip) line \(offset))") }

    static var directory: String {
        if let value = getenv("ITCB_GPIOCHIP_DIR"), value[0] != 0 { return String(cString: value) }
        return "/dev"
    }

    /// What the look-up found, said once the port has opened (`announce`): a
    /// port that cannot be opened is then its one error line.
    nonisolated(unsafe) static var finding: String? = nil

    /// Looks for the line once, for the UART at `port`, and keeps what it found
    /// as one line: where the radio can be power-cycled, or why not.
    static func lookUp(port: String, tree: DeviceTree) {
        guard !lookedUp else { return }
        lookedUp = true
        switch search(tree: tree) {
        case .success(let line):
            found = line
            finding = built("\(port): the radio's power line is \(line.description): a chip silent at both rates is power-cycled (low \(settle) ms, high, \(settle) ms) and brought up afresh")
        case .failure(let why):
            finding = built("\(port): no power line to cycle (\(why.text)); a chip silent at both rates ends in exit \(Exit.controller)")
        }
    }

    /// Says what `lookUp` found, the first time a port opened.
    static func announce() {
        guard let line = finding else { return }
        finding = nil
        Log.info(line)
    }

    struct NotFound: Error { let text: String }

    /// The board's `BT_ON` line: on a Raspberry Pi only (elsewhere a line of
    /// that name need not power this radio), the first free one by name.
    static func search(tree: DeviceTree) -> Result<PowerLine, NotFound> {
        guard tree.isRaspberryPi else {
            return .failure(NotFound(text: tree.compatible.isEmpty ? built("no device tree at \(escaped: tree.directory)")
                                     : built("\(escaped: tree.model ?? tree.boardName) is not a Raspberry Pi")))
        }
        let dir = directory
        guard let handle = opendir(dir) else {
            return .failure(NotFound(text: built("cannot read \(escaped: dir): \(errnoText)")))
        }
        var chips: [String] = []
        while let entry = readdir(handle) {
            let entryName = String(cString: clinux_dirent_name(entry))
            if entryName.hasBytePrefix("gpiochip") { chips.append(entryName) }
        }
        closedir(handle)
        // gpiochip0, gpiochip1, …, gpiochip10: in the kernel's order.
        // An insertion sort of a few names: the stdlib's stable sort and its
        // lexicographic compare were 4 KB of the binary for this one list.
        var sorted = 1
        while sorted < chips.count {
            var i = sorted
            while i > 0, chipPrecedes(chips[i], chips[i - 1]) {
                chips.swapAt(i, i - 1)
                i -= 1
            }
            sorted += 1
        }
        // Joined as they come, into one buffer (no array of texts joined after).
        var problems: BuiltText = ""
        var anyProblem = false
        for entry in chips {
            let path = dir + "/" + entry
            switch lineNamed(name, in: path) {
            case .success(let offset?): return .success(PowerLine(chip: path, offset: offset))
            case .success(nil): continue
            case .failure(let why):
                if anyProblem { problems.append("; ") }
                problems.append("\(why.text)")
                anyProblem = true
            }
        }
        // A chip that could not be read, or a line held by another, says more than "none".
        if anyProblem { return .failure(NotFound(text: problems.string)) }
        return .failure(NotFound(text: chips.isEmpty ? built("no gpiochip in \(escaped: dir)") : built("no GPIO line named \(name) on \(escaped: dir)/gpiochip*")))
    }

    /// gpiochip2 before gpiochip10: the shorter name first, then byte by byte.
    static func chipPrecedes(_ a: String, _ b: String) -> Bool {
        let (x, y) = (a.utf8.count, b.utf8.count)
        guard x == y else { return x < y }
        return a.withCString { a in b.withCString { b in strcmp(a, b) < 0 } }
    }

    /// The offset of the line called `wanted` on the chip at `path`; nil when it has none.
    static func lineNamed(_ wanted: String, in path: String) -> Result<UInt32?, NotFound> {
        let fd = clinux_open(path, O_RDWR | O_CLOEXEC, 0)
        guard fd >= 0 else {
            let hint = errno == EACCES || errno == EPERM ? " (the service needs DeviceAllow=char-gpiochip rw)" : ""
            return .failure(NotFound(text: built("cannot open \(escaped: path): \(errnoText)\(hint)")))
        }
        defer { sysClose(fd) }
        let lines = clinux_gpiochip_lines(fd)
        guard lines >= 0 else { return .failure(NotFound(text: built("\(escaped: path) is not a gpiochip: \(errnoText)"))) }
        var lineName = [CChar](repeating: 0, count: Int(GPIO_MAX_NAME_SIZE))
        var holder = [CChar](repeating: 0, count: Int(GPIO_MAX_NAME_SIZE))
        for offset in 0..<UInt32(lines) {
            var used: Int32 = 0
            guard clinux_gpio_line_info(fd, offset, &lineName, &holder, &used) == 0 else {
                return .failure(NotFound(text: built("\(escaped: path) line \(offset): \(errnoText)")))
            }
            guard sameBytes(PowerLine.text(lineName), wanted) else { continue }
            if used != 0 {
                let who = PowerLine.text(holder)
                return .failure(NotFound(text: built("\(wanted) on \(escaped: path) line \(offset) is held by \(who.isEmpty ? "another consumer" : who.escaped) (the kernel's Bluetooth driver still has the radio?)")))
            }
            return .success(offset)
        }
        return .success(nil)
    }

    /// A NUL-ended C string held in an array.
    static func text(_ chars: [CChar]) -> String { string(fromCString: chars) }

    /// Off, Linux's wait, on, its wait again. Nil when done, else why not.
    func cycle() -> String? {
        if PowerLine.lineFD < 0 {
            let fd = clinux_open(chip, O_RDWR | O_CLOEXEC, 0)
            guard fd >= 0 else { return built("cannot open \(escaped: chip): \(errnoText)") }
            let line = clinux_gpio_request_output(fd, offset, 0, PowerLine.consumer)
            let failure = line < 0 ? errnoString() : ""
            sysClose(fd)  // the line's descriptor stands on its own
            guard line >= 0 else { return built("cannot request \(description) as an output: \(failure)") }
            PowerLine.lineFD = line
        } else if clinux_gpio_set(PowerLine.lineFD, 0) != 0 {
            return built("cannot drive \(description) low: \(errnoText)")
        }
        PowerLine.wait(PowerLine.settle)
        guard clinux_gpio_set(PowerLine.lineFD, 1) == 0 else { return built("cannot drive \(description) high: \(errnoText)") }
        PowerLine.wait(PowerLine.settle)
        return nil
    }

    /// Sleeps `milliseconds` in full (SIGHUP does not cut it short; a stop does).
    static func wait(_ milliseconds: Int32) {
        let end = monotonicMilliseconds() + UInt64(milliseconds)
        while true {
            let now = monotonicMilliseconds()
            guard now < end, Signals.sleep(Int32(end - now)) != .stop else { return }
        }
    }
}
