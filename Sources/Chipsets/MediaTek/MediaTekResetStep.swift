import BLEHost

/// One step of MediaTek's Bluetooth subsystem reset (`btmtk_usb_subsys_reset`):
/// a UHW register read or write (`last`: the value last read, its `clear` bits
/// cleared and `set` bits set), or a pause.
public enum MediaTekResetStep: Equatable {
    case read(UInt32)
    case write(UInt32, UInt32)
    case writeLast(UInt32, set: UInt32, clear: UInt32)
    case pause(UInt64)

    /// Step `index` of the reset for `chip` (its id's low 16 bits); nil past the
    /// end, after which the reset-done bit is polled.
    public static func step(chip: UInt32, _ index: Int) -> MediaTekResetStep? {
        typealias R = MediaTekRegister
        switch chip & 0xFFFF {
        case 0x7922:
            switch index {
            case 0: return .read(R.subsystemReset)
            case 1: return .writeLast(R.subsystemReset, set: 0x2020, clear: 0)
            case 2: return .write(R.endpointResetOption, R.endpointResetInOut)
            case 3: return .read(R.subsystemReset)
            case 4: return .writeLast(R.subsystemReset, set: 1, clear: 0)
            case 5: return .pause(100)
            default: return nil
            }
        case 0x7925:
            switch index {
            case 0: return .read(R.resetConnV3)
            case 1: return .writeLast(R.resetConnV3, set: 1 << 5, clear: 0)
            case 2: return .read(R.resetConnV3)
            case 3: return .writeLast(R.resetConnV3, set: 1 << 13, clear: 0xFF00)
            case 4: return .write(R.endpointResetOption, R.endpointResetInOut)
            case 5: return .read(R.resetConnV3)
            case 6: return .writeLast(R.resetConnV3, set: 1, clear: 0)
            case 7: return .write(R.udmaInterrupt, 0xFF)
            case 8: return .read(R.udmaInterrupt)
            case 9: return .write(R.udmaInterrupt1, 0xFF)
            case 10: return .read(R.udmaInterrupt1)
            case 11: return .pause(100)
            default: return nil
            }
        default:
            switch index {
            case 0: return .write(R.endpointResetOption, R.endpointResetInOut)
            case 1: return .read(R.watchdogStatus)
            case 2: return .write(R.subsystemReset, 1)
            case 3: return .write(R.udmaInterrupt, 0xFF)
            case 4: return .read(R.udmaInterrupt)
            case 5: return .write(R.udmaInterrupt1, 0xFF)
            case 6: return .read(R.udmaInterrupt1)
            // MT7921 needs 20 ms between the two writes of the reset bit.
            case 7: return .pause(20)
            case 8: return .write(R.subsystemReset, 0)
            case 9: return .read(R.subsystemReset)
            default: return nil
            }
        }
    }
}
