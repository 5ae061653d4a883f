import BLEHost

public enum MediaTekError: UInt8, Error, Equatable {
    case fileTooShort, fileTooLarge, foreignFile, badSectionCount, sectionOutside
    case registerFailed, unsupportedChip, wrongOperation, shortAnswer, answerNeverCame

    /// Each case's text, in the order of the cases (ListedText).
    public var text: ListedText {
        ListedText("""
            RAM code file truncated (shorter than its header and section map)\0\
            RAM code file larger than any MediaTek RAM code\0\
            not a MediaTek RAM code (no ALPS header)\0\
            RAM code file corrupt (no sections, or more than 32)\0\
            RAM code file truncated or corrupt (a section runs past its end)\0\
            controller refused a register read or write\0\
            unsupported MediaTek chip id\0\
            controller answered another WMT operation\0\
            controller's WMT answer cut short\0\
            controller's WMT answer never came (its answer reads stayed empty for 5 s)\0
            """, rawValue)
    }
}
