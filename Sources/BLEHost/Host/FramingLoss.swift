/// Why the driver decided an H4 stream is out of sync.
public enum FramingLoss: Equatable {
    /// Unknown packet indicators or impossible lengths (count of each).
    case notHCI(Int)
    /// A packet began and did not finish within `HostLoopSettings.stallLimit`.
    case stalled
}
