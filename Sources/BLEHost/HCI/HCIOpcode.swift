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
