import BLEHost

/// A question to one chipset of the table that needs no driver state (its USB IDs, its recognition, its data).
public protocol ChipsetQuestion {
    associatedtype Result
    mutating func ask<D: ChipsetDriver>(_ chipset: D.Type) -> Result
}
