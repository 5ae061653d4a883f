import BLEHost

/// A chipset's `ChipsetInfo` (its names, folder, package, quirks), asked of the table without its set-up state.
struct InfoQuestion: ChipsetQuestion {
    /// Out of line, one per chipset, each writing its info straight into the
    /// result (inlined, `ChipsetEntries.info` merged the four in registers).
    @inline(never) func ask<C: Chipset>(_ chipset: C.Type) -> ChipsetInfo { C.info }
}
