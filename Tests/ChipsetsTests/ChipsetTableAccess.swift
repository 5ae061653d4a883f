@testable import Chipsets

/// Each chipset's driver in the table by name, for the tests that look at a
/// driver's state after a run (the program reaches them only by index).
extension ChipsetTable {
    var realtek: RealtekDriver { driver }
    var intel: IntelDriver { rest.driver }
    var broadcom: BroadcomDriver { rest.rest.driver }
    var mediatek: MediaTekDriver { rest.rest.rest.driver }
}
