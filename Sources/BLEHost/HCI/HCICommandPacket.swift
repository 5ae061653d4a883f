/// An HCI command packet in H4 framing (`Capacity.HCIPacket`): indicator, opcode,
/// length, parameters. The literal is that capacity's (value generics take literals only).
public extension FixedBytes where capacity == 260 {
    /// Starts an H4 command packet; finish it with `finishCommand()` once parameters are appended.
    static func command(_ opcode: UInt16) -> Capacity.HCIPacket {
        var packet = Capacity.HCIPacket()
        packet.append(H4PacketType.command)
        packet.appendUInt16(opcode)
        packet.append(0)
        return packet
    }

    /// Writes the parameter length into the header (byte 3).
    mutating func finishCommand() {
        self[3] = UInt8(truncatingIfNeeded: count - 4)
    }
}
