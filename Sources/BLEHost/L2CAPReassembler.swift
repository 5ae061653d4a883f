/// LE fixed channels (Core Vol 3 Part A §2.1).
public enum L2CAPChannel {
    public static let att: UInt16 = 0x0004
    public static let leSignaling: UInt16 = 0x0005
    public static let smp: UInt16 = 0x0006
}

/// Rebuilds L2CAP B-frames from ACL fragments (Core Vol 3 Part A §3.1, Vol 4 Part E
/// §5.4.2). The basic header's length decides when a PDU is complete, so whole PDUs
/// longer than the controller's buffer (as Bumble sends them) work as well as
/// fragmented ones. Malformed input is dropped and counted: a continuation without a
/// start, more bytes than the header announced, or a PDU larger than the buffer.
public struct L2CAPReassembler {
    /// 4-byte header + the largest PDU we accept (ATT_MTU 247 + headroom).
    public static let capacity = 260

    var buffer = FixedBytes<260>()
    var active = false
    /// Set while skipping the rest of a PDU too large to keep.
    var discarding = false
    public private(set) var dropped = 0

    public init() {}

    /// Feeds one ACL payload; `deliver` gets (channel id, L2CAP payload) when a PDU completes.
    public mutating func push(
        _ fragment: UnsafeRawBufferPointer, isStart: Bool, deliver: (UInt16, UnsafeRawBufferPointer) -> Void
    ) {
        if isStart {
            if active { dropped += 1 }  // the previous PDU never completed (a skipped one was counted)
            buffer.removeAll()
            active = true
            discarding = false
        } else if discarding {
            return
        } else if !active {
            dropped += 1
            return
        }
        guard buffer.append(fragment) else {
            // Longer than any PDU we accept: skip it to its end (the next start).
            dropped += 1
            active = false
            discarding = true
            buffer.removeAll()
            return
        }
        guard buffer.count >= 4 else { return }
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
            let channel = UInt16(buffer[2]) | UInt16(buffer[3]) &<< 8
            buffer.withBytes { deliver(channel, UnsafeRawBufferPointer(rebasing: $0[4...])) }
            buffer.removeAll()
        }
    }

    public mutating func reset() {
        buffer.removeAll()
        active = false
        discarding = false
    }
}
