/// What `H4Deframer.next` found.
public enum H4Frame: Equatable {
    case none
    /// A packet (without its indicator) at `input[start..<start + count]`.
    case inPlace(type: UInt8, start: Int, count: Int)
    /// A packet gathered across reads: `withPacket` gives it.
    case buffered(type: UInt8)
}
