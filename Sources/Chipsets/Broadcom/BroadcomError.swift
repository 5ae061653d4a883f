import BLEHost

public enum BroadcomError: UInt8, Error, Equatable {
    case emptyFile, fileTooLarge, truncatedRecord, notVendorCommand, noLaunchRAM
    case commandFailed, versionFailed, baudRateRefused

    /// Each case's text, in the order of the cases (ListedText).
    public var text: ListedText {
        ListedText("""
            patchram file is empty\0\
            patchram file larger than any Broadcom patch\0\
            patchram file truncated or corrupt (a record runs past its end)\0\
            patchram file corrupt (a record is not a vendor command)\0\
            patchram file corrupt (its last record is not Launch RAM)\0\
            controller refused a patchram command\0\
            controller did not answer Read Local Version after the restart\0\
            controller refused Update UART Baud Rate\0
            """, rawValue)
    }
}
