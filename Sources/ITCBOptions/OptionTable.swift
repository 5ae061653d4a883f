// The command line's one option table, shared by the program (Sources/ITCBDongle:
// its parser, --help and the per-role checks are built from it) and by
// the build-time tool that writes the man page and the shell completion from it
// (Sources/ITCBDongleDocs), so the shipped binary carries no generator.
// Its rows are literals, so the compiler lays the table out as constant data:
// the transports of --transport and the firmware folders of --firmware-dir are
// written out (CommandLineTests holds them to Program.transports and to
// ChipsetTable), where building them at start took 1.5 KB of code (2026-11-28).

/// Every option, in the order --help lists them. An InlineArray literal the
/// compiler lays out as constant data; an Array literal took 2.2 KB of
/// start-up code under the platform's inlining flags (2026-11-28). The
/// program reads it; `optionTable` is the same rows as an Array.
public let optionRows: InlineArray<30, OptionSpec> = [
    // Both roles
    OptionSpec(option: .role, value: "peripheral|central",
               help: "The role to play: peripheral (the 8-Ball) or central (the asker)."),
    OptionSpec(option: .transport, value: "transport", help: "The controller: usb | usb:VID:PID | usb:BUS-PORT[.PORT…] | tcp:HOST:PORT | serial:PATH[@BAUD][,flow|,noflow].",
               defaultValue: "usb"),  // Program.transports (CommandLineTests holds them to it)
    OptionSpec(option: .btsnoop, value: "file",
               help: "Write every HCI packet to FILE in BTSnoop format (Wireshark, btmon)."),
    OptionSpec(option: .metricsFile, value: "file",
               help: "Write Prometheus metrics (peripheral: questions, centrals, answer latency, advertising; central: questions asked and their outcomes; both: an info series, up, the controller answering, recoveries, drops) to FILE, ending in .prom, for node_exporter's textfile collector: replaced every 15 s and at exit, when it says up 0. It also probes the controller every 15 s when nothing else does. A directory missing or read-only is warned about once; the role runs on. Default: $ITCB_METRICS_FILE, else none."),
    OptionSpec(option: .logLevel, value: "level",
               help: "error, warning, info, debug or trace (trace logs every HCI packet). Default: warning for the central (answers and warnings only), info otherwise."),
    OptionSpec(option: .address, value: "address",
               help: "Static random address to use (AA:BB:CC:DD:EE:FF, two top bits set) instead of the controller's public one. Default: the public address, or an address derived from /etc/machine-id when the controller has none."),
    OptionSpec(option: .controllerInfo, value: nil,
               help: "Print the controller's information (HCI/LMP version, manufacturer, address, LE features, buffers) and exit."),
    OptionSpec(option: .listControllers, value: nil,
               help: "List USB Bluetooth controllers (VID:PID, bus-port path, product, kernel driver) and exit."),
    OptionSpec(option: .healthCheck, value: "seconds",
               help: "Probe the controller every N seconds (up to 3600) so one that stopped answering is reset. Default: off, or the watchdog period under systemd."),
    OptionSpec(option: .udevMatch, value: "sysfs-path",
               help: "For the udev rule: print ITCB_BLUETOOTH, ITCB_CONFIGURED and ITCB_INSTANCE for the USB device at this sysfs path, and exit."),
    // Peripheral
    OptionSpec(option: .name, value: "name",
               help: "Peripheral: advertised and GAP Device Name (UTF-8, 1–248 bytes; up to 8 bytes fit whole in the advertising data, up to 29 in the scan response, which carries the full name). Default: $ITCB_NAME, else 8-Ball."),
    OptionSpec(option: .answers, value: "slug|text",
               help: "Peripheral: send answers as slugs (SLUG-ANSWER-NN, what the ITCB apps expect) or as English text. Default: $ITCB_ANSWERS, else slug."),
    OptionSpec(option: .maxCentrals, value: "n",
               help: "Peripheral: how many centrals may be connected at once (1–8).", defaultValue: "4"),
    OptionSpec(option: .idleTimeout, value: "seconds",
               help: "Peripheral: disconnect a central that asks nothing (no accepted write: subscription or question) for this many seconds (up to 86400), so idle links cannot fill every slot; 0 = never. Default: 60."),
    OptionSpec(option: .connectionInterval, value: "min-max|off",
               help: "Peripheral: the connection interval to ask each central for, in ms (MIN-MAX from 7.5 to 1000; Apple's guidelines want MIN >= 15 and MAX >= MIN + 15), with latency 0 and a 4 s supervision timeout; off keeps the central's. Default: 15-30."),
    OptionSpec(option: .seed, value: "n",
               help: "Peripheral: seed for the answer sequence (same seed, same answers), 0 to 18446744073709551615. Default: random."),
    // Central
    OptionSpec(option: .question, value: "question",
               help: "Central: a question to ask. Without it: $ITCB_QUESTION (one question) if set, else standard input, one question per line."),
    OptionSpec(option: .rssiMin, value: "dBm",
               help: "Central: weakest RSSI accepted, dBm (negative values work: --rssi-min -70); --scan judges the window only when --rssi-min or --rssi-max is given.",
               defaultValue: "-60"),
    OptionSpec(option: .rssiMax, value: "dBm", help: "Central: strongest RSSI accepted, dBm.",
               defaultValue: "-20"),
    OptionSpec(option: .timeout, value: "seconds",
               help: "Central: seconds (more than 0, up to 600) each question may take as a whole: finding the 8-Ball, connecting, MTU exchange, discovery and the answer; after it \"device offline\" (exit 7; 6 when none was found), within 1.5 s more. Also how long --scan lists. Default: 5; --scan without it runs until Ctrl-C."),
    OptionSpec(option: .count, value: "n", help: "Central: ask each question N times (soak runs), N >= 1.",
               defaultValue: "1"),
    OptionSpec(option: .peer, value: "name|address", help: "Central: only this 8-Ball: its name (any case) or its address. A name is judged after 1 s of listening (half of --timeout if less); a name two 8-Balls have is refused (exit 6, both listed), never guessed."),
    OptionSpec(option: .scan, value: nil,
               help: "Central: list every 8-Ball heard (name, address, RSSI) as it appears, whatever its signal unless --rssi-min/--rssi-max is given; stops after --timeout, or at Ctrl-C without it."),
    OptionSpec(option: .json, value: nil,
               help: "Central: print one JSON object per line on stdout for every outcome: each answer, each question's error, each 8-Ball --scan finds, and one error object for a run that fails otherwise."),
    // USB
    OptionSpec(option: .usbReset, value: nil, help: "USB: reset the dongle before use (for dongles that hang on warm start)."),
    OptionSpec(option: .exitOnUnplug, value: nil,
               help: "USB: exit (code 8) when the dongle is unplugged instead of waiting for it to come back."),
    OptionSpec(option: .firmwareDir, value: "dir",
               help: "Where controller firmware lives: DIR/rtl_bt/, DIR/intel/, DIR/brcm/, DIR/mediatek/, each chipset's folder as Linux names it, from Debian's non-free-firmware packages (/usr/share/doc/itcb-dongle/docs/DONGLES.md). Default: /lib/firmware. Given, it also probes TCP and serial controllers for every chipset (a serial port is always probed for those that have no other identity)."),
    OptionSpec(option: .deviceTree, value: "dir",
               help: "The board's device tree, read at start: a Raspberry Pi's own Bluetooth UART gets the rate and flow control Raspberry Pi's tools give it (3000000 with RTS/CTS, 921600 or, on the mini-UART, 460800 without), and Broadcom firmware is looked for under the board's name first, as Linux does. serial:PATH@BAUD and ,flow or ,noflow override it. Default: /proc/device-tree (none there: the UART's defaults)."),
    // The program itself
    OptionSpec(option: .version, value: nil, help: "Show the version."),
    OptionSpec(option: .help, value: nil, help: "Show help information."),
]

/// The rows as an Array (the docs tool, the tests).
public let optionTable: [OptionSpec] = optionRows.indices.map { optionRows[$0] }

public func optionSpec(_ option: OptionName) -> OptionSpec? {
    for index in optionRows.indices where optionRows[index].option == option { return optionRows[index] }
    return nil
}

/// The words of a paragraph (its UTF-8 bytes; words are split at spaces)
/// wrapped to `width` columns after `indent` spaces, each line ended by a
/// newline, appended to `out`; `indented`: the first line's indent is on `out`
/// already (--help's option names). Bytes in and out: --help is built as
/// bytes, and String appends are inlined code at each (2026-11-28).
@inline(never)
public func wrap(_ text: [UInt8], indent: Int, width: Int = 80, into out: inout [UInt8], indented: Bool = false) {
    var column = 0  // bytes on the line after its indent; 0: no word on it yet
    var first = true
    var start = 0
    while start < text.count {
        var end = start
        while end < text.count, text[end] != 0x20 { end += 1 }
        let length = end - start
        if length > 0 {  // runs of spaces make no empty words
            if column > 0, indent + column + 1 + length > width {
                out.append(0x0A)
                column = 0
            }
            if column > 0 {
                out.append(0x20)
                column += 1
            } else if !(first && indented) {
                appendSpaces(indent, to: &out)
            }
            first = false
            text.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start..<end])) }
            column += length
        }
        start = end + 1
    }
    if column > 0 { out.append(0x0A) }
}

/// `count` spaces (none when it is not positive), appended a slice of blanks
/// at a time: no growth check per byte.
@inline(never)
public func appendSpaces(_ count: Int, to out: inout [UInt8]) {
    let blanks: StaticString = "                "
    var rest = count
    while rest > 0 {
        out.append(contentsOf: UnsafeBufferPointer(start: blanks.utf8Start, count: min(rest, 16)))
        rest -= 16
    }
}
