import BLEHost

/// A chipset's `ChipsetInfo` (its names, folder, package, quirks), asked of the table without its set-up state.
struct InfoQuestion: ChipsetQuestion {
    func ask<C: Chipset>(_ chipset: C.Type) -> ChipsetInfo { C.info }
}
