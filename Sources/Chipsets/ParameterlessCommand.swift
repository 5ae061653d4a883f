import BLEHost

extension FixedBytes where capacity == 260 {
    /// `self` becomes a command without parameters. Out of line: the pair
    /// `.command(_:)`, `finishCommand()` was inlined at each of its 14 uses.
    @inline(never) mutating func setCommand(_ opcode: UInt16) {
        startCommand(opcode)
        finishCommand()
    }

    /// `self` becomes a command's header, its parameters to follow (then
    /// `finishCommand()`). Out of line: `.command(_:)` clears the whole packet.
    @inline(never) mutating func startCommand(_ opcode: UInt16) {
        self = .command(opcode)
    }

    /// Four bytes, little-endian (an address, a rate). Out of line: one per loader.
    @inline(never) mutating func appendLE32(_ value: UInt32) {
        _ = appendUInt16(UInt16(truncatingIfNeeded: value))
        _ = appendUInt16(UInt16(truncatingIfNeeded: value >> 16))
    }
}
