extension InputDrop {
    public static let count = 5
    public var index: Int {
        switch self {
        case .hciEvent: 0
        case .aclUnknownHandle: 1
        case .aclMalformed: 2
        case .l2capUnknownChannel: 3
        case .attMalformed: 4
        }
    }
}

extension OutputDrop {
    public static let count = 3
    public var index: Int {
        switch self {
        case .commandQueueFull: 0
        case .transmitQueueFull: 1
        case .eventQueueFull: 2
        }
    }
}

/// The host's counters by kind and reason, for a platform's metrics: plain
/// numbers, no I/O. Each set sums to its total in `Host` (`recoveries`,
/// `droppedInput`, `droppedOutput`); UInt32 keeps the firmware's RAM small.
public struct HostCounts {
    /// By `RecoveryKind.rawValue`.
    public internal(set) var recoveries = InlineArray<3, UInt32>(repeating: 0)
    /// By `InputDrop.index`.
    public internal(set) var droppedInput = InlineArray<5, UInt32>(repeating: 0)
    /// By `OutputDrop.index`.
    public internal(set) var droppedOutput = InlineArray<3, UInt32>(repeating: 0)
    /// Links made since the host started (`connectionCount` is those up now).
    public internal(set) var connections: UInt32 = 0

    public init() {}
}
