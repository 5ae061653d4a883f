import CLinux
import BLEHost
import Chipsets

/// The board, read from the device tree (`--device-tree DIR`, default
/// `/proc/device-tree`, or a dumped copy laid out the same way): its model,
/// its first `compatible` entry, and what Raspberry Pi's own tools read to
/// drive the built-in radio's UART. Read once at start; the texts are kept as
/// bytes (valid UTF-8, as decoded text would be) for the process's life: no
/// String or array of them to copy and release where the tree is passed.
struct DeviceTree {
    static let defaultDirectory = "/proc/device-tree"
    /// The tree read at start (`load`); none until then.
    nonisolated(unsafe) static var current = DeviceTree(directory: defaultDirectory)

    let directory: String
    /// `model`'s first string ("Raspberry Pi 4 Model B Rev 1.4"); nil without one.
    var model: UnsafeRawBufferPointer? = nil
    /// The root's first `compatible` entry ("raspberrypi,4-model-b"); nil without a tree.
    var board: UnsafeRawBufferPointer? = nil
    /// The name Linux `btbcm.c` gives the board (`btbcm_get_board_name`: the
    /// first `compatible` entry, '/' as '-'); nil without a tree.
    var boardName: UnsafeRawBufferPointer? = nil

    static func load(_ directory: String) -> DeviceTree {
        var tree = DeviceTree(directory: directory)
        tree.model = tree.firstString("model")
        tree.board = tree.firstString("compatible")
        if let board = tree.board {
            let name = UnsafeMutableRawBufferPointer.allocate(byteCount: board.count, alignment: 1)
            name.copyMemory(from: board)
            for i in 0..<name.count where name[i] == UInt8(ascii: "/") { name[i] = UInt8(ascii: "-") }
            tree.boardName = UnsafeRawBufferPointer(name)
        }
        return tree
    }

    /// `boardName` as the chipsets take it (`ChipsetContext.board`).
    var boardText: Capacity.ChipsetText {
        var text = Capacity.ChipsetText()
        if let boardName { text.append(boardName) }
        return text
    }

    var isRaspberryPi: Bool {
        guard let board, board.count >= 12 else { return false }
        return memcmp(board.baseAddress!, ("raspberrypi," as StaticString).utf8Start, 12) == 0
    }

    /// The whole path of a property (the tree's directory, "/", `path`).
    func path(_ path: StaticString) -> CPathBuffer {
        var whole = CPathBuffer()
        whole.append(string: directory)
        whole.append("/")
        whole.append(terminated: path.utf8Start)
        return whole
    }

    /// A property's bytes (the caller deallocates); nil when it is not there (or not readable).
    func property(_ relative: StaticString) -> UnsafeMutableRawBufferPointer? {
        // A local, not a temporary: its buffer lives until the read is done.
        let whole = path(relative)
        return readTreeFile(whole.pointer)
    }

    /// The first non-empty NUL-separated string of a property (a string, or a
    /// string list such as `compatible`), as UTF-8 decoded (repaired); kept.
    @inline(never)
    func firstString(_ relative: StaticString) -> UnsafeRawBufferPointer? {
        guard let file = property(relative) else { return nil }
        defer { file.deallocate() }
        var start = 0
        for index in 0...file.count where index == file.count || file[index] == 0 {
            if index > start {
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: file[start..<index]), as: UTF8.self)
                return text.withBytes { bytes in
                    let kept = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
                    kept.copyMemory(from: bytes)
                    return UnsafeRawBufferPointer(kept)
                }
            }
            start = index + 1
        }
        return nil
    }
}

/// A regular file of the tree read whole, at most 4096 bytes (stat first:
/// never a device or FIFO opened); nil for anything else. The caller deallocates.
func readTreeFile(_ path: UnsafePointer<CChar>) -> UnsafeMutableRawBufferPointer? {
    try? readRegularFile(path, limit: 4096)
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
        guard let board = tree.board else {
            return standard(built("no device tree at \(tree.directory); the UART's defaults"))
        }
        let model = tree.model ?? board
        guard tree.isRaspberryPi else {
            return standard(built("\(escapedBytes: model) is not a Raspberry Pi (compatible \(escapedBytes: board)); the UART's defaults"))
        }
        if let pins = tree.property("soc/gpio@7e200000/uart0_pins/brcm,pins") {
            let count = pins.count
            pins.deallocate()
            let uart0 = tree.property("aliases/uart0"), serial1 = tree.property("aliases/serial1")
            defer { uart0?.deallocate(); serial1?.deallocate() }
            guard let uart0, let serial1, uart0.count == serial1.count,
                  memcmp(uart0.baseAddress!, serial1.baseAddress!, uart0.count) == 0 else {
                return BoardUART(baud: 460_800, flow: false,
                                 reason: about(model, "the mini-UART carries Bluetooth (aliases/uart0 is not aliases/serial1), as Raspberry Pi's btuart"))
            }
            if count == 16 {
                return BoardUART(baud: 3_000_000, flow: true,
                                 reason: about(model, "the Bluetooth UART has four pins (uart0_pins: TX, RX, CTS, RTS), as Raspberry Pi's btuart"))
            }
            return BoardUART(baud: 921_600, flow: false,
                             reason: built("\(escapedBytes: model): the Bluetooth UART has \(count / 4) pins (uart0_pins: no CTS, RTS), as Raspberry Pi's btuart"))
        }
        if let alias = tree.firstString("aliases/bluetooth") {
            defer { alias.deallocate() }
            guard alias.first == 0x2F else { return standard(noUART(model)) }
            // The node (after its leading "/"): its max-speed, one big-endian cell.
            let node = UnsafeRawBufferPointer(rebasing: alias[1...])
            var path = tree.path("")
            path.append(node)
            path.append("/max-speed")
            var speed = 0
            if let cell = readTreeFile(path.pointer) {
                speed = cell.count == 4 ? cell.reduce(0) { $0 << 8 | Int($1) } : -1
                cell.deallocate()
            } else {
                speed = -1
            }
            if speed >= 0, SerialTransport.speed(speed) != nil {
                // The node's parent: its non-empty components but the last, joined
                // by "/" (bytes, not split and joined: no array of Substrings).
                var cut = node.count
                while cut > 0, node[cut - 1] == 0x2F { cut -= 1 }
                while cut > 0, node[cut - 1] != 0x2F { cut -= 1 }
                path = tree.path("")
                var separator = false, any = false
                for byte in node[..<cut] {
                    if byte == 0x2F {
                        separator = any
                    } else {
                        if separator { path.append("/") }
                        separator = false
                        any = true
                        path.append(byte: byte)
                    }
                }
                path.append("/uart-has-rtscts")
                let has = readTreeFile(path.pointer)
                has?.deallocate()
                let flow = has != nil
                return BoardUART(baud: speed, flow: flow,
                                 reason: built("\(escapedBytes: model): the Bluetooth node's max-speed, its UART \(flow ? "with" : "without") uart-has-rtscts, as Linux's hci_bcm reads them"))
            }
        }
        return standard(noUART(model))
    }

    static func noUART(_ model: UnsafeRawBufferPointer) -> String {
        about(model, "the tree names no Bluetooth UART pins (soc/gpio@7e200000/uart0_pins) nor a Bluetooth node; the UART's defaults")
    }

    /// "MODEL: WHAT": the reasons that are the model and one literal, put together once.
    @inline(never)
    static func about(_ model: UnsafeRawBufferPointer, _ what: StaticString) -> String {
        built("\(escapedBytes: model): \(what)")
    }

    /// The spec's explicit choices win over the board's (`@BAUD`, `,flow`/`,noflow`);
    /// the line that says so for the UART at `port`.
    func overridden(baud: Int?, flow: Bool?, port: String) -> (choice: BoardUART, line: String) {
        let choice = BoardUART(baud: baud ?? self.baud, flow: flow ?? self.flow, reason: reason)
        // Built into one buffer: no String of each piece.
        var line = BuiltText.Builder()
        line.appendLiteral("serial:")
        line.appendInterpolation(escaped: port)
        line.appendLiteral(": ")
        line.appendRate(choice)
        line.appendLiteral(" once the chip is set up: ")
        if baud == nil && flow == nil {
            line.appendInterpolation(reason)
        } else {
            if let baud {
                line.appendLiteral("@")
                line.appendInterpolation(baud)
            }
            if let flow { line.appendLiteral(flow ? ",flow" : ",noflow") }
            line.appendLiteral(" given; the board's own: ")
            line.appendRate(self)
            line.appendLiteral(" (")
            line.appendInterpolation(reason)
            line.appendLiteral(")")
        }
        return (choice, BuiltText(line).string)
    }
}

extension BuiltText.Builder {
    /// "3000000 baud with RTS/CTS": the UART's rate and flow control. Out of line: two callers.
    @inline(never)
    fileprivate mutating func appendRate(_ uart: BoardUART) {
        appendInterpolation(uart.baud)
        appendLiteral(uart.flow ? " baud with RTS/CTS" : " baud without flow control")
    }
}
