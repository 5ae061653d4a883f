/// HCI command opcodes used by the host (Core Vol 4 Part E §7). OGF << 10 | OCF.
public enum HCIOpcode {
    public static let disconnect: UInt16 = 0x0406
    public static let setEventMask: UInt16 = 0x0C01
    public static let reset: UInt16 = 0x0C03
    public static let readLocalVersion: UInt16 = 0x1001
    public static let readLocalCommands: UInt16 = 0x1002
    public static let readLocalFeatures: UInt16 = 0x1003
    public static let readBufferSize: UInt16 = 0x1005
    public static let readBDAddr: UInt16 = 0x1009
    public static let leSetEventMask: UInt16 = 0x2001
    public static let leReadBufferSize: UInt16 = 0x2002
    public static let leReadLocalFeatures: UInt16 = 0x2003
    public static let leSetRandomAddress: UInt16 = 0x2005
    public static let leSetAdvertisingParameters: UInt16 = 0x2006
    public static let leSetAdvertisingData: UInt16 = 0x2008
    public static let leSetScanResponseData: UInt16 = 0x2009
    public static let leSetAdvertiseEnable: UInt16 = 0x200A
    public static let leSetScanParameters: UInt16 = 0x200B
    public static let leSetScanEnable: UInt16 = 0x200C
    public static let leCreateConnection: UInt16 = 0x200D
    public static let leCreateConnectionCancel: UInt16 = 0x200E
    public static let leConnectionUpdate: UInt16 = 0x2013
    public static let leReadRemoteFeatures: UInt16 = 0x2016
    public static let leLongTermKeyNegativeReply: UInt16 = 0x201B
    public static let leRemoteConnectionParameterReply: UInt16 = 0x2020
    public static let leRemoteConnectionParameterNegativeReply: UInt16 = 0x2021
    public static let leSetDataLength: UInt16 = 0x2022
    public static let leSetPHY: UInt16 = 0x2032
}

/// HCI event codes (Core Vol 4 Part E §7.7).
public enum HCIEventCode {
    public static let disconnectionComplete: UInt8 = 0x05
    public static let encryptionChange: UInt8 = 0x08
    public static let commandComplete: UInt8 = 0x0E
    public static let commandStatus: UInt8 = 0x0F
    public static let hardwareError: UInt8 = 0x10
    public static let numberOfCompletedPackets: UInt8 = 0x13
    public static let dataBufferOverflow: UInt8 = 0x1A
    public static let leMeta: UInt8 = 0x3E
}

/// LE Meta subevent codes (Core Vol 4 Part E §7.7.65).
public enum LESubevent {
    public static let connectionComplete: UInt8 = 0x01
    public static let advertisingReport: UInt8 = 0x02
    public static let connectionUpdateComplete: UInt8 = 0x03
    public static let readRemoteFeaturesComplete: UInt8 = 0x04
    public static let longTermKeyRequest: UInt8 = 0x05
    public static let remoteConnectionParameterRequest: UInt8 = 0x06
    public static let dataLengthChange: UInt8 = 0x07
    public static let enhancedConnectionComplete: UInt8 = 0x0A
    public static let phyUpdateComplete: UInt8 = 0x0C
    public static let extendedAdvertisingReport: UInt8 = 0x0D
}

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

/// LE Supported Features bits (Core Vol 6 Part B §4.6) the host uses.
public enum LEFeature {
    public static let connectionParametersRequest: UInt64 = 1 &<< 1
    public static let dataPacketLengthExtension: UInt64 = 1 &<< 5
    public static let twoMegabitPHY: UInt64 = 1 &<< 8
}

/// An HCI command packet in H4 framing: indicator, opcode, length, parameters.
public typealias HCIPacket = Capacity.OutgoingPacket

public extension FixedBytes where capacity == 260 {
    /// Starts an H4 command packet; finish it with `finishCommand()` once parameters are appended.
    static func command(_ opcode: UInt16) -> HCIPacket {
        var packet = HCIPacket()
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
