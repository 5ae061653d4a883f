/// What one ACL fragment completed.
public enum L2CAPReassembly: Equatable {
    /// The PDU is incomplete (or the fragment was dropped: see `dropped`).
    case needMore
    /// The fragment held the whole PDU: its payload is `fragment[4...]`, not copied.
    case completeInPlace(channel: UInt16)
    /// Fragments made a whole PDU: its payload is `payload` until the next push.
    case completeInBuffer(channel: UInt16)
}
