/// Rebuilds L2CAP B-frames from ACL fragments (Core Vol 3 Part A §3.1, Vol 4 Part E
/// §5.4.2). The basic header's length decides when a PDU is complete, so whole PDUs
/// longer than the controller's buffer (as Bumble sends them) work as well as
/// fragmented ones. As in BTstack's hci.c, a PDU that arrives in one fragment is
/// handed on where it lies; only fragments are copied into the buffer. Malformed
/// input is dropped and counted: a continuation without a start, more bytes than
/// the header announced, or a PDU larger than the buffer.
public struct L2CAPReassembler: ~Copyable {
    let pin = InPlacePin()
    /// 4-byte header + the largest PDU we accept (`Capacity.L2CAPPDU`).
    public static var capacity: Int { Capacity.L2CAPPDU.capacityCount }

    var buffer = Capacity.L2CAPPDU()
    var active = false
    /// Set while skipping the rest of a PDU too large to keep.
    var discarding = false
    public private(set) var dropped = 0

    public init() {}

    /// The payload of the PDU that `push` reported `.completeInBuffer`.
    public func withPayload<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        buffer.withBytes { body(UnsafeRawBufferPointer(rebasing: $0[4...])) }
    }

    /// Feeds one ACL payload (`isStart`: packet boundary 0b00/0b10).
    public mutating func push(_ fragment: UnsafeRawBufferPointer, isStart: Bool) -> L2CAPReassembly {
        if isStart {
            if active { dropped += 1 }  // the previous PDU never completed (a skipped one was counted)
            buffer.removeAll()
            active = false
            discarding = false
            if fragment.count >= 4 {
                let total = 4 + Int(readUInt16(fragment, 0))
                if total == fragment.count, total <= L2CAPReassembler.capacity {
                    return .completeInPlace(channel: readUInt16(fragment, 2))
                }
                if total < fragment.count || total > L2CAPReassembler.capacity {
                    // More bytes than announced, or larger than any PDU we accept:
                    // skip it (and its continuations) to the next start.
                    discarding = total > fragment.count
                    dropped += 1
                    return .needMore
                }
            }
            active = true
        } else if discarding {
            return .needMore
        } else if !active {
            dropped += 1
            return .needMore
        }
        guard buffer.append(fragment) else {
            // Longer than any PDU we accept: skip it to its end (the next start).
            dropped += 1
            active = false
            discarding = true
            buffer.removeAll()
            return .needMore
        }
        guard buffer.count >= 4 else { return .needMore }
        let total = 4 + Int(UInt16(buffer[0]) | UInt16(buffer[1]) &<< 8)
        if total > L2CAPReassembler.capacity {
            dropped += 1
            active = false
            discarding = buffer.count < total
            buffer.removeAll()
        } else if buffer.count > total {
            dropped += 1
            active = false
            buffer.removeAll()
        } else if buffer.count == total {
            active = false
            return .completeInBuffer(channel: UInt16(buffer[2]) | UInt16(buffer[3]) &<< 8)
        }
        return .needMore
    }
}
