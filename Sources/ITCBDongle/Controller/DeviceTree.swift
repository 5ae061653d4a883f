import CLinux
import BLEHost
import Chipsets

/// The board, read from the device tree (`--device-tree DIR`, default
/// `/proc/device-tree`, or a dumped copy laid out the same way): its model,
/// its `compatible` list, and what Raspberry Pi's own tools read to drive
/// the built-in radio's UART. Read once at start.
struct DeviceTree {
    static let defaultDirectory = "/proc/device-tree"
    /// The tree read at start (`load`); none until then.
    nonisolated(unsafe) static var current = DeviceTree(directory: defaultDirectory, model: nil, compatible: [])

    let directory: String
    /// `model`, NUL removed ("Raspberry Pi 4 Model B Rev 1.4"); nil without a tree.
    let model: String?
    /// The root's `compatible` entries in order ("raspberrypi,4-model-b", "brcm,bcm2711").
    let compatible: [String]

    static func load(_ directory: String) -> DeviceTree {
        DeviceTree(directory: directory, model: readString(directory + "/model"),
                   compatible: readStrings(directory + "/compatible") ?? [])
    }

    /// The name Linux `btbcm.c` gives the board (`btbcm_get_board_name`: the
    /// first `compatible` entry, '/' as '-'); empty without a tree.
    var boardName: String {
        guard let first = compatible.first else { return "" }
        var bytes = Array(first.utf8)  // '/' is one byte: replaced in place
        for i in bytes.indices where bytes[i] == UInt8(ascii: "/") { bytes[i] = UInt8(ascii: "-") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `boardName` as the chipsets take it (`ChipsetContext.board`).
    var boardText: Capacity.ChipsetText {
        var text = Capacity.ChipsetText()
        _ = boardName.utf8.withContiguousStorageIfAvailable { text.append(UnsafeRawBufferPointer($0)) }
        return text
    }

    var isRaspberryPi: Bool { compatible.first?.hasBytePrefix("raspberrypi,") ?? false }

    /// A property's bytes; nil when it is not there (or not readable).
    func property(_ path: String) -> [UInt8]? { DeviceTree.readBytes(directory + "/" + path) }

    static func readBytes(_ path: String) -> [UInt8]? {
        guard let file = try? readRegularFile(path, limit: 4096) else { return nil }
        defer { file.deallocate() }
        return Array(file)
    }

    /// NUL-separated strings (a string property, or a string list such as `compatible`).
    static func readStrings(_ path: String) -> [String]? {
        guard let file = try? readRegularFile(path, limit: 4096) else { return nil }
        defer { file.deallocate() }
        // Cut at each NUL by hand (empty pieces left out, as split does): the
        // stdlib's split over [UInt8] was a specialisation of its own. Read in
        // place: no array of the bytes first.
        let bytes = UnsafeRawBufferPointer(file).assumingMemoryBound(to: UInt8.self)
        var strings: [String] = []
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0 {
            if index > start { strings.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) }
            start = index + 1
        }
        return strings
    }

    static func readString(_ path: String) -> String? { readStrings(path)?.first }

    /// A one-cell (big-endian 32-bit) property such as `max-speed`.
    func cell(_ path: String) -> Int? {
        guard let bytes = property(path), bytes.count == 4 else { return nil }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }
}

/// How the board's own Bluetooth UART is driven: its rate after the chip's
/// set-up and whether RTS/CTS flow control is on, and why.
struct BoardUART: Equatable {
    var baud: Int
    var flow: Bool
    var reason: String

    /// Today's behaviour on any UART: RTS/CTS (the H4 transport requires it,
    /// Core Vol 4 Part A §1) and 3,000,000 baud after a Broadcom set-up.
    static func standard(_ why: String) -> BoardUART {
        BoardUART(baud: SerialTransport.defaultFastBaud, flow: true, reason: why)
    }

    /// What the tree says, as Raspberry Pi's `btuart` (RPi-Distro/pi-bluetooth,
    /// usr/bin/btuart) decides: when `aliases/uart0` is `aliases/serial1` (the
    /// PL011 carries Bluetooth), 3,000,000 with flow control if the GPIO
    /// block's `uart0_pins` has four pins (TX, RX, CTS, RTS: 16 bytes), else
    /// 921,600 without; otherwise (the mini-UART carries it, `miniuart-bt`)
    /// 460,800 without. A tree without that GPIO block (the Pi 5's BCM2712,
    /// where btuart never runs: hciuart.service needs `gpio@7e200000/bt_pins`)
    /// is read as Linux's hci_bcm reads it: the Bluetooth node
    /// (`aliases/bluetooth`) gives `max-speed`, its UART `uart-has-rtscts`.
    static func decide(_ tree: DeviceTree) -> BoardUART {
        guard let board = tree.compatible.first else {
            return standard(built("no device tree at \(tree.directory); the UART's defaults"))
        }
        let model = tree.model ?? board
        guard tree.isRaspberryPi else {
            return standard(built("\(escaped: model) is not a Raspberry Pi (compatible \(escaped: board)); the UART's defaults"))
        }
        if let pins = tree.property("soc/gpio@7e200000/uart0_pins/brcm,pins") {
            let uart0 = tree.property("aliases/uart0")
            guard uart0 != nil, uart0 == tree.property("aliases/serial1") else {
                return BoardUART(baud: 460_800, flow: false,
                                 reason: built("\(escaped: model): the mini-UART carries Bluetooth (aliases/uart0 is not aliases/serial1), as Raspberry Pi's btuart"))
            }
            if pins.count == 16 {
                return BoardUART(baud: 3_000_000, flow: true,
                                 reason: built("\(escaped: model): the Bluetooth UART has four pins (uart0_pins: TX, RX, CTS, RTS), as Raspberry Pi's btuart"))
            }
            return BoardUART(baud: 921_600, flow: false,
                             reason: built("\(escaped: model): the Bluetooth UART has \(pins.count / 4) pins (uart0_pins: no CTS, RTS), as Raspberry Pi's btuart"))
        }
        if let node = DeviceTree.readString(tree.directory + "/aliases/bluetooth")?.afterBytePrefix("/"),
           let speed = tree.cell(String(node) + "/max-speed"), SerialTransport.speed(speed) != nil {
            // The node's parent: its non-empty components but the last, joined
            // by "/" (bytes, not split and joined: no array of Substrings).
            let bytes = Array(node.utf8)
            var cut = bytes.count
            while cut > 0, bytes[cut - 1] == 0x2F { cut -= 1 }
            while cut > 0, bytes[cut - 1] != 0x2F { cut -= 1 }
            var uart: [UInt8] = []
            var separator = false
            for byte in bytes[..<cut] {
                if byte == 0x2F {
                    separator = !uart.isEmpty
                } else {
                    if separator { uart.append(0x2F) }
                    separator = false
                    uart.append(byte)
                }
            }
            uart.appendTerminated(("/uart-has-rtscts" as StaticString).utf8Start)
            let flow = tree.property(String(decoding: uart, as: UTF8.self)) != nil
            return BoardUART(baud: speed, flow: flow,
                             reason: built("\(escaped: model): the Bluetooth node's max-speed, its UART \(flow ? "with" : "without") uart-has-rtscts, as Linux's hci_bcm reads them"))
        }
        return standard(built("\(escaped: model): the tree names no Bluetooth UART pins (soc/gpio@7e200000/uart0_pins) nor a Bluetooth node; the UART's defaults"))
    }

    /// The spec's explicit choices win over the board's (`@BAUD`, `,flow`/`,noflow`).
    func overridden(baud: Int?, flow: Bool?) -> (choice: BoardUART, line: String) {
        var choice = self
        // Built into one buffer: no array of pieces joined.
        var given: BuiltText = ""
        if let baud {
            choice.baud = baud
            given.append("@\(baud)")
        }
        if let flow {
            choice.flow = flow
            given.append(flow ? ",flow" : ",noflow")
        }
        let rate = built("\(choice.baud) baud \(choice.flow ? "with RTS/CTS" : "without flow control")")
        let why = baud == nil && flow == nil ? reason
            : built("\(given.string) given; the board's own: \(self.baud) baud \(self.flow ? "with RTS/CTS" : "without flow control") (\(reason))")
        return (choice, built("\(rate) once the chip is set up: \(why)"))
    }
}
