import BLEHost

extension FixedBytes where capacity == 260 {
    /// `self` becomes a command without parameters. Out of line: the pair
    /// `.command(_:)`, `finishCommand()` was inlined at each of its 14 uses.
    @inline(never) mutating func setCommand(_ opcode: UInt16) {
        self = .command(opcode)
        finishCommand()
    }
}
