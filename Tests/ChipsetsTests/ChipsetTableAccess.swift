@testable import Chipsets

/// Each chipset in the table by name, for the tests that look at a
/// chipset's state after a run (the program reaches them only by index).
extension ChipsetTable {
    var realtek: RealtekChipset { chipset }
    var intel: IntelChipset { rest.chipset }
    var broadcom: BroadcomChipset { rest.rest.chipset }
    var mediatek: MediaTekChipset { rest.rest.rest.chipset }
}
