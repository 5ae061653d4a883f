/// What called for a controller recovery (`HostCounts.recoveries`).
public enum RecoveryKind: Int {
    /// A command went unanswered past its deadline.
    case commandTimeout
    /// The controller sent a Hardware Error event.
    case hardwareError
    /// The platform lost the H4 framing (`Host.resynchronize`).
    case framingLoss

    public static let count = 3
}
