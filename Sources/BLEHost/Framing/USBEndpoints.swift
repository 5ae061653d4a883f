/// The endpoints of a USB Bluetooth controller (Core Vol 4 Part B §2.1.1):
/// interrupt IN for events, bulk IN and bulk OUT for ACL, with their packet sizes.
public struct USBEndpoints: Equatable {
    public var event: UInt8 = 0
    public var aclIn: UInt8 = 0
    public var aclOut: UInt8 = 0
    public var eventMaxPacket = 0
    public var aclInMaxPacket = 0
    public var aclOutMaxPacket = 0

    public init() {}
}
