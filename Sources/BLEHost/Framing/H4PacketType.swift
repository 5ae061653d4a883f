/// HCI packet indicators of the UART transport (Core Vol 4 Part A §2).
public enum H4PacketType {
    public static let command: UInt8 = 0x01
    public static let acl: UInt8 = 0x02
    public static let sco: UInt8 = 0x03
    public static let event: UInt8 = 0x04
    public static let iso: UInt8 = 0x05
}
