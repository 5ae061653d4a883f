import BLEHost

/// A chipset's quirks, asked of the table without a driver.
public struct QuirksOf: ChipsetQuestion {
    public init() {}
    public mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> ChipsetQuirks { D.info.quirks }
}
