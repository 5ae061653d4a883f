import BLEHost

/// Why a patch file or a download was refused. Every malformed input ends here.
public enum RealtekError: UInt8, Error, Equatable {
    case fileTooShort, fileTooLarge, unknownSignature
    case missingExtensionSignature, badExtensionInstruction, projectIDNotFound, projectMismatch
    case tableOutOfBounds, patchOutOfBounds, patchTooShort, noPatchForROMVersion
    case v2BadSection, v2NoPatch
    case configBadMagic, configTruncated, payloadTooLarge
    case commandFailed, unexpectedEvent, configMissing

    public var text: StaticString {
        switch self {
        case .fileTooShort: "firmware file truncated"
        case .fileTooLarge: "firmware file larger than any Realtek patch"
        case .unknownSignature: "not a Realtek patch (no Realtech/RTBTCore signature)"
        case .missingExtensionSignature: "extension signature missing at the end"
        case .badExtensionInstruction: "corrupt extension section"
        case .projectIDNotFound: "project id missing from the extension section"
        case .projectMismatch: "patch is for another chip (project id does not match)"
        case .tableOutOfBounds: "patch table runs past the end of the file"
        case .patchOutOfBounds: "patch runs past the end of the file"
        case .patchTooShort: "patch shorter than its trailer"
        case .noPatchForROMVersion: "no patch for this ROM version"
        case .v2BadSection: "corrupt section in v2 patch"
        case .v2NoPatch: "no patch for this ROM version in v2 file"
        case .configBadMagic: "config file has a bad magic"
        case .configTruncated: "config file truncated"
        case .payloadTooLarge: "patch and config exceed the download limit"
        case .commandFailed: "controller refused a vendor command"
        case .unexpectedEvent: "unexpected event during firmware download"
        case .configMissing: "config file required but missing"
        }
    }
}
