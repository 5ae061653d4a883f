/// What the controller told us about itself during bring-up.
public struct ControllerInfo {
    public var hciVersion: UInt8 = 0
    public var hciRevision: UInt16 = 0
    public var lmpVersion: UInt8 = 0
    public var manufacturer: UInt16 = 0
    public var lmpSubversion: UInt16 = 0
    public var publicAddress = BDAddress.zero
    /// The address we advertise/scan/connect with (public, or static random).
    public var address = BDAddress.zero
    /// ACL data length and packet count the host must respect.
    public var aclDataLength: UInt16 = 27
    public var aclPackets: UInt16 = 1
    /// True when LE Read Buffer Size gave the numbers (else the shared BR/EDR buffers).
    public var leBuffers = true
    public var lmpFeatures: UInt64 = 0
    public var leFeatures: UInt64 = 0
    /// Supported Commands bit mask, first 8 octets (Vol 4 Part E §6.27); enough for reports.
    public var supportedCommandsHead: UInt64 = 0

    public init() {}
}
