/// Controller bring-up, one command at a time (Core Vol 4 Part E §7; the order
/// BTstack's hci.c and Bumble's host.py use).
enum InitStep: UInt8 {
    case reset, readLocalVersion, readBDAddr, readLocalCommands, readLocalFeatures
    case setEventMask, leSetEventMask, leReadBufferSize, readBufferSize, leReadLocalFeatures
    case leSetRandomAddress, done

    var opcode: UInt16 {
        switch self {
        case .reset: HCIOpcode.reset
        case .readLocalVersion: HCIOpcode.readLocalVersion
        case .readBDAddr: HCIOpcode.readBDAddr
        case .readLocalCommands: HCIOpcode.readLocalCommands
        case .readLocalFeatures: HCIOpcode.readLocalFeatures
        case .setEventMask: HCIOpcode.setEventMask
        case .leSetEventMask: HCIOpcode.leSetEventMask
        case .leReadBufferSize: HCIOpcode.leReadBufferSize
        case .readBufferSize: HCIOpcode.readBufferSize
        case .leReadLocalFeatures: HCIOpcode.leReadLocalFeatures
        case .leSetRandomAddress: HCIOpcode.leSetRandomAddress
        case .done: 0
        }
    }
}
