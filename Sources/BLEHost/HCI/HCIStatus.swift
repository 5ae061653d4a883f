/// HCI status / error codes that the host acts on (Core Vol 1 Part F).
public enum HCIStatus {
    public static let success: UInt8 = 0x00
    public static let unknownConnection: UInt8 = 0x02
    public static let hardwareFailure: UInt8 = 0x03
    public static let connectionTimeout: UInt8 = 0x08
    public static let commandDisallowed: UInt8 = 0x0C
    public static let remoteUserTerminated: UInt8 = 0x13
    public static let remoteLowResources: UInt8 = 0x14
    public static let localHostTerminated: UInt8 = 0x16
    public static let unsupportedRemoteFeature: UInt8 = 0x1A
    public static let unacceptableConnectionParameters: UInt8 = 0x3B
    public static let connectionFailedToEstablish: UInt8 = 0x3E
    public static let unknownConnectionIdentifier: UInt8 = 0x02
}
