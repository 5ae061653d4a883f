import BLEHost

/// Read Local Version Information's return parameters.
public struct LocalVersion: Equatable {
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16

    /// From the parameters after the status byte; nil when short.
    public init?(_ rest: UnsafeRawBufferPointer) {
        guard rest.count >= 8 else { return nil }
        hciVersion = rest[0]
        hciRevision = UInt16(rest[1]) | UInt16(rest[2]) << 8
        lmpVersion = rest[3]
        manufacturer = UInt16(rest[4]) | UInt16(rest[5]) << 8
        lmpSubversion = UInt16(rest[6]) | UInt16(rest[7]) << 8
    }

    /// From a Command Complete event for Read Local Version with success; nil otherwise.
    public init?(commandComplete event: UnsafeRawBufferPointer) {
        guard event.count >= 6, event[0] == HCIEventCode.commandComplete,
              UInt16(event[3]) | UInt16(event[4]) << 8 == HCIOpcode.readLocalVersion, event[5] == HCIStatus.success
        else { return nil }
        self.init(UnsafeRawBufferPointer(rebasing: event[6...]))
    }
}
