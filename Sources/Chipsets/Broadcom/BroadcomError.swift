import BLEHost

public enum BroadcomError: UInt8, Error, Equatable {
    case emptyFile, fileTooLarge, truncatedRecord, notVendorCommand, noLaunchRAM
    case commandFailed, versionFailed, baudRateRefused

    public var text: StaticString {
        switch self {
        case .emptyFile: "patchram file is empty"
        case .fileTooLarge: "patchram file larger than any Broadcom patch"
        case .truncatedRecord: "patchram file truncated or corrupt (a record runs past its end)"
        case .notVendorCommand: "patchram file corrupt (a record is not a vendor command)"
        case .noLaunchRAM: "patchram file corrupt (its last record is not Launch RAM)"
        case .commandFailed: "controller refused a patchram command"
        case .versionFailed: "controller did not answer Read Local Version after the restart"
        case .baudRateRefused: "controller refused Update UART Baud Rate"
        }
    }
}
