import BLEHost

public enum IntelError: UInt8, Error, Equatable {
    case notIntel, unsupportedVariant, intermediateLoader, limitedCCE, unknownEngine, missingCNV
    case fileTooShort, fileTooLarge, badCSSHeader, commandOutOfBounds, unalignedEnd, emptyPayload
    case notVendorCommand, noBootAddress
    case badDDC, commandFailed, downloadRejected
    case intermediateLoaderStep

    public var text: StaticString {
        switch self {
        case .notIntel: "Read Version did not describe an Intel controller"
        case .unsupportedVariant: "hardware variant not supported"
        case .intermediateLoader: "controller is in its intermediate loader (not supported)"
        case .intermediateLoaderStep: "this chip boots an intermediate loader before its firmware, a step not supported yet"
        case .limitedCCE: "boot loader does not acknowledge every fragment (limited CCE, not supported)"
        case .unknownEngine: "secure boot engine type missing or unknown"
        case .missingCNV: "Read Version lacks the CNVi/CNVr ids that name the firmware file"
        case .fileTooShort: "firmware file truncated (shorter than its headers)"
        case .fileTooLarge: "firmware file larger than any Intel firmware"
        case .badCSSHeader: "not an Intel firmware file for this secure boot engine (CSS header)"
        case .commandOutOfBounds: "firmware file truncated or corrupt (a command runs past its end)"
        case .unalignedEnd: "firmware file corrupt (payload does not end on a 4-byte boundary)"
        case .emptyPayload: "firmware file has no payload"
        case .notVendorCommand: "firmware file corrupt (a payload command is not a vendor command)"
        case .noBootAddress: "firmware file corrupt (no Write Boot Params command with a boot address)"
        case .badDDC: "DDC file corrupt (a record runs past its end)"
        case .commandFailed: "controller refused a vendor command"
        case .downloadRejected: "controller rejected the firmware (secure boot check failed)"
        }
    }
}
