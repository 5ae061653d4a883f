import BLEHost

/// An operation on one chipset driver of the table.
public protocol ChipsetVisitor {
    associatedtype Result
    mutating func visit<D: ChipsetDriver>(_ driver: inout D) -> Result
}
