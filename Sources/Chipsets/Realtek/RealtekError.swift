import BLEHost

/// Why a patch file or a download was refused. Every malformed input ends here.
public enum RealtekError: UInt8, Error, Equatable {
    case fileTooShort, fileTooLarge, unknownSignature
    case missingExtensionSignature, badExtensionInstruction, projectIDNotFound, projectMismatch
    case tableOutOfBounds, patchOutOfBounds, patchTooShort, noPatchForROMVersion
    case v2BadSection, v2NoPatch
    case configBadMagic, configTruncated, payloadTooLarge
    case commandFailed, unexpectedEvent, configMissing

    /// Each case's text, in the order of the cases (ListedText).
    public var text: ListedText {
        ListedText("""
            firmware file truncated\0\
            firmware file larger than any Realtek patch\0\
            not a Realtek patch (no Realtech/RTBTCore signature)\0\
            extension signature missing at the end\0\
            corrupt extension section\0\
            project id missing from the extension section\0\
            patch is for another chip (project id does not match)\0\
            patch table runs past the end of the file\0\
            patch runs past the end of the file\0\
            patch shorter than its trailer\0\
            no patch for this ROM version\0\
            corrupt section in v2 patch\0\
            no patch for this ROM version in v2 file\0\
            config file has a bad magic\0\
            config file truncated\0\
            patch and config exceed the download limit\0\
            controller refused a vendor command\0\
            unexpected event during firmware download\0\
            config file required but missing\0
            """, rawValue)
    }
}
