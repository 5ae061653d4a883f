import CLinux
import BLEHost
import Chipsets

/// Chipset set-up before the host's bring-up: the firmware downloads of the
/// Chipsets target's `ChipsetTable` (sans-IO), run by the core's driver as
/// its first init step; this picks the plan for a transport and reads the files
/// each chipset asks for from `<firmware dir>/<its folder>/`. Names no vendor.
enum ChipsetSetup {
    /// Where the controller is, as the chipsets see it.
    static func context(for transport: Transport) -> ChipsetContext {
        var context = ChipsetContext()
        transport.setupLink?.chipsetFacts(into: &context)
        context.board = DeviceTree.current.boardText
        return context
    }

    static func fileExists(_ path: String) -> Bool { access(cPath(path), R_OK) == 0 }

    /// A file the caller owns, or no bytes.
    static func bytes(_ file: UnsafeMutableRawBufferPointer?) -> UnsafeRawBufferPointer {
        file.map { UnsafeRawBufferPointer($0) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// The set-up the driver runs first on this transport: by VID:PID on USB,
    /// the probe (Reset, Read Local Version, then the chipset that recognises
    /// it) on other transports when --firmware-dir is given, on a UART for the
    /// chipsets that are always probed there, else none.
    static func setup(for transport: Transport, firmwareDirectoryGiven: Bool, resetFirst: Bool = false) -> VendorSetup {
        var context = context(for: transport)
        context.resetFirst = resetFirst
        let plan = VendorSetup.plan(for: &context, probe: firmwareDirectoryGiven)
        switch plan {
        case .fromReset(let index), .probe(only: let index?):
            var question = VendorControlQuestion()
            transport.setupLink?.useVendorControl(ChipsetTable.ask(index, &question) ?? false)
        default:
            transport.setupLink?.useVendorControl(false)
        }
        return VendorSetup(plan: plan, context: context)
    }
}

/// One quirk of an entry: its whole info was built to read it.
struct VendorControlQuestion: ChipsetQuestion {
    func ask<C: Chipset>(_ chipset: C.Type) -> Bool { C.info.quirks.vendorControlOverUSB }
}

func text(_ bytes: Capacity.ChipsetText) -> String {
    bytes.withBytes { String(repairingUTF8: $0) }
}

extension VendorSetup {
    /// The chipset running the set-up, in the platform's words; nil while probing or when none took the controller.
    /// Out of line: the run loop asks it in several places.
    @inline(never)
    func facts() -> ChipsetFacts? { describe().map(ChipsetFacts.init) }
}
