import BLEHost

/// How answers go on the air (--answers).
public enum AnswerStyle: Equatable {
    /// SLUG-ANSWER-NN, what the ITCB apps send and localize.
    case slug
    /// The English phrase.
    case text
}
