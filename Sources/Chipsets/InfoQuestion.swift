import BLEHost

/// A chipset's `ChipsetInfo` (its names, folder, package, quirks), asked of the table without a driver.
struct InfoQuestion: ChipsetQuestion {
    func ask<D: ChipsetDriver>(_ chipset: D.Type) -> ChipsetInfo { D.info }
}
