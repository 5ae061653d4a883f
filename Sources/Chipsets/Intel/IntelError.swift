import BLEHost

public enum IntelError: UInt8, Error, Equatable {
    case notIntel, unsupportedVariant, intermediateLoader, limitedCCE, unknownEngine, missingCNV
    case fileTooShort, fileTooLarge, badCSSHeader, commandOutOfBounds, unalignedEnd, emptyPayload
    case notVendorCommand, noBootAddress
    case badDDC, commandFailed, downloadRejected
    case intermediateLoaderStep

    /// Each case's text, in the order of the cases (ListedText).
    public var text: ListedText {
        ListedText("""
            Read Version did not describe an Intel controller\0\
            hardware variant not supported\0\
            controller is in its intermediate loader (not supported)\0\
            boot loader does not acknowledge every fragment (limited CCE, not supported)\0\
            secure boot engine type missing or unknown\0\
            Read Version lacks the CNVi/CNVr ids that name the firmware file\0\
            firmware file truncated (shorter than its headers)\0\
            firmware file larger than any Intel firmware\0\
            not an Intel firmware file for this secure boot engine (CSS header)\0\
            firmware file truncated or corrupt (a command runs past its end)\0\
            firmware file corrupt (payload does not end on a 4-byte boundary)\0\
            firmware file has no payload\0\
            firmware file corrupt (a payload command is not a vendor command)\0\
            firmware file corrupt (no Write Boot Params command with a boot address)\0\
            DDC file corrupt (a record runs past its end)\0\
            controller refused a vendor command\0\
            controller rejected the firmware (secure boot check failed)\0\
            this chip boots an intermediate loader before its firmware, a step not supported yet\0
            """, rawValue)
    }
}
