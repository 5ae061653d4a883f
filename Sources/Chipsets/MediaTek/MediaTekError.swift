import BLEHost

public enum MediaTekError: UInt8, Error, Equatable {
    case fileTooShort, fileTooLarge, foreignFile, badSectionCount, sectionOutside
    case registerFailed, unsupportedChip, wrongOperation, shortAnswer, answerNeverCame

    public var text: StaticString {
        switch self {
        case .fileTooShort: "RAM code file truncated (shorter than its header and section map)"
        case .fileTooLarge: "RAM code file larger than any MediaTek RAM code"
        case .foreignFile: "not a MediaTek RAM code (no ALPS header)"
        case .badSectionCount: "RAM code file corrupt (no sections, or more than 32)"
        case .sectionOutside: "RAM code file truncated or corrupt (a section runs past its end)"
        case .registerFailed: "controller refused a register read or write"
        case .unsupportedChip: "unsupported MediaTek chip id"
        case .wrongOperation: "controller answered another WMT operation"
        case .shortAnswer: "controller's WMT answer cut short"
        case .answerNeverCame: "controller's WMT answer never came (its answer reads stayed empty for 5 s)"
        }
    }
}
