import BLEHost

/// An operation on one chipset driver of the table (a set-up step).
public protocol ChipsetVisitor {
    associatedtype Result
    mutating func visit<D: ChipsetDriver>(_ driver: inout D) -> Result
}

/// A read of one chipset driver's state (its status, its description).
public protocol ChipsetReader {
    associatedtype Result
    func read<D: ChipsetDriver>(_ driver: borrowing D) -> Result
}
