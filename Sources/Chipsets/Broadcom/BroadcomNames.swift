import BLEHost

/// The `.hcd` names Linux `btbcm.c` (`btbcm_initialize`) asks for, in its
/// order: `BCM<chip><postfix>.<board>.hcd`, `BCM<chip><postfix>.hcd`,
/// `BCM<postfix>.<board>.hcd`, `BCM<postfix>.hcd`; the postfix is
/// `-<vid>-<pid>` on USB and empty on a UART, the board names only when the
/// device tree gives one (`ChipsetContext.board`). On USB this program then
/// tries `BCM<chip>.hcd` too (not Linux's: the name BCM20702 files are
/// usually installed under).
enum BroadcomNames {
    static func add(chip: StaticString, context: ChipsetContext, into request: inout FileRequest) {
        addPair(chip, context, &request)
        addPair("BCM", context, &request)
        if context.overUSB {
            request.addCandidate {
                append(chip, to: &$0)
                append(".hcd", to: &$0)
            }
        }
    }

    /// The board's name first (when there is one), then without it.
    static func addPair(_ stem: StaticString, _ context: ChipsetContext, _ request: inout FileRequest) {
        if !context.board.isEmpty { addName(stem, context, board: true, &request) }
        addName(stem, context, board: false, &request)
    }

    /// Out of line: each of `addPair`'s two candidates inlined the placing.
    @inline(never) static func addName(_ stem: StaticString, _ context: ChipsetContext, board: Bool, _ request: inout FileRequest) {
        request.addCandidate { write(stem, context, board: board, &$0) }
    }

    /// Out of line: the placing writes the first candidate or a later one.
    @inline(never) static func write(_ stem: StaticString, _ context: ChipsetContext, board: Bool, _ out: inout Capacity.ChipsetText) {
        append(stem, to: &out)
        if context.overUSB {
            append("-", to: &out)
            appendHex(UInt32(context.usbVendor), digits: 4, to: &out)
            append("-", to: &out)
            appendHex(UInt32(context.usbProduct), digits: 4, to: &out)
        }
        if board {
            append(".", to: &out)
            _ = out.append(contentsOf: context.board)
        }
        append(".hcd", to: &out)
    }
}

/// The chips Raspberry Pi's boards carry, by board name (the device tree's
/// first `compatible` entry), as Raspberry Pi OS's `bluez-firmware` links
/// them (RPi-Distro/bluez-firmware, `debian/bluez-firmware.links`,
/// 1.2-9+rpt3): a board with two chip variants has both, the one its
/// units mostly carry first. For `--list-controllers`, before the chip
/// answers; at start the chip's own Read Local Version decides.
enum BroadcomBoards {
    static func chip(board: Capacity.ChipsetText, variant: Int) -> StaticString? {
        if board.equals("raspberrypi,3-model-b") || board.equals("raspberrypi,model-zero-w") {
            return variant == 0 ? "BCM43430A1" : nil
        }
        if board.equals("raspberrypi,model-zero-2-w") {
            return variant == 0 ? "BCM43430A1" : variant == 1 ? "BCM43430B0" : nil
        }
        if board.equals("raspberrypi,3-model-a-plus") || board.equals("raspberrypi,3-model-b-plus")
            || board.equals("raspberrypi,4-model-b") || board.equals("raspberrypi,5-model-b") {
            return variant == 0 ? "BCM4345C0" : nil
        }
        if board.equals("raspberrypi,4-compute-module") {
            return variant == 0 ? "BCM4345C0" : variant == 1 ? "BCM4345C5" : nil
        }
        if board.equals("raspberrypi,400") { return variant == 0 ? "BCM4345C5" : nil }
        return nil
    }
}

extension FixedBytes {
    /// The same bytes as `text`.
    func equals(_ text: StaticString) -> Bool {
        guard count == text.utf8CodeUnitCount else { return false }
        return withBytes { bytes in
            for index in 0..<count where bytes[index] != text.utf8Start[index] { return false }
            return true
        }
    }
}
