import BLEHost

/// A question to one chipset of the table that needs no set-up state (its USB IDs, its recognition, its data).
/// `ask` may keep what it found in the question itself (written in place: a
/// `BoardChipQuery` holds a whole file request); it never changes the table.
/// A question that keeps nothing implements it as a plain `func`.
public protocol ChipsetQuestion {
    associatedtype Result
    mutating func ask<C: Chipset>(_ chipset: C.Type) -> Result
}
