import BLEHost

/// An operation on one chipset of the table (a set-up step).
public protocol ChipsetVisitor {
    associatedtype Result
    mutating func visit<C: Chipset>(_ chipset: inout C) -> Result
}

/// A read of one chipset's set-up state (its status, its description).
public protocol ChipsetReader {
    associatedtype Result
    func read<C: Chipset>(_ chipset: borrowing C) -> Result
}
