/// The one reader of HCI packet lengths (Core Vol 4 Part E §5.4): how long a
/// packet's header is after its H4 indicator, and the payload length the
/// header declares. The H4 de-framer, the USB endpoint reassembler and the
/// driver's whole-packet check all ask here.
public enum HCIPacketLength {
    /// Header bytes after the indicator, 0 for an unknown indicator.
    public static func header(_ type: UInt8) -> Int {
        switch type {
        case H4PacketType.event: 2
        case H4PacketType.acl, H4PacketType.iso: 4
        case H4PacketType.sco, H4PacketType.command: 3
        default: 0
        }
    }

    /// The payload length declared by `header` (at least `header(type)` bytes,
    /// which every caller checked).
    public static func payload(_ type: UInt8, _ header: UnsafeRawBufferPointer) -> Int {
        switch type {
        case H4PacketType.event: Int(byteAt(header, 1))
        case H4PacketType.acl: Int(byteAt(header, 2)) | Int(byteAt(header, 3)) &<< 8
        case H4PacketType.sco, H4PacketType.command: Int(byteAt(header, 2))
        default: (Int(byteAt(header, 2)) | Int(byteAt(header, 3)) &<< 8) & 0x3FFF  // ISO: 14-bit length
        }
    }

    /// An event or ACL packet (what the host takes) whose declared length matches what arrived.
    public static func isWhole(type: UInt8, _ packet: UnsafeRawBufferPointer) -> Bool {
        guard type == H4PacketType.event || type == H4PacketType.acl else { return false }
        let header = header(type)
        return packet.count >= header && packet.count == header &+ payload(type, packet)
    }
}
