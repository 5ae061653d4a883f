/// What a transport dropped or recovered from since open, for the status line
/// and --metrics-file. USB counts all three; a descriptor transport none (its
/// H4 stream is cut by the driver, which counts its own drops).
struct TransportCounts {
    /// Packets dropped before the driver (cut short, oversize).
    var droppedPackets = 0
    /// Stalled transfers (halt cleared) and babbling ones (dropped).
    var stalls = 0
    var babbledTransfers = 0
}
