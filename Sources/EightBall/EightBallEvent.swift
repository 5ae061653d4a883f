/// What the 8-Ball did, for the platform's log.
public enum EightBallEvent: Equatable {
    /// A question was accepted (its text: `withQuestion(connection:)`).
    case questionAccepted(connection: UInt16)
    /// A write that is not a question got ATT error 0x0E (its text is in
    /// `withQuestion(connection:)` when that holds `length` bytes).
    case questionRejected(connection: UInt16, length: Int)
    /// The answer went out as a notification.
    case answered(connection: UInt16, answer: Int)
    /// The answer waits for the central to subscribe: a central may write its
    /// question before it subscribes (docs/COMMAND-LINE.md, "The peripheral").
    case answerWaitingForSubscription(connection: UInt16)
}
