/// Outgoing L2CAP PDUs, fragmented to the controller's ACL data length only when
/// a buffer credit is available (Core Vol 4 Part E §4.1.1, Vol 3 Part A §7.2).
/// Fixed capacity: a full queue refuses the PDU and the caller reports it.
public struct ACLTransmitQueue {
    public static let capacity = 16

    var handles: InlineArray<16, UInt16> = InlineArray(repeating: 0)
    var pdus: InlineArray<16, FixedBytes<260>> = InlineArray(repeating: FixedBytes())
    var head = 0
    public private(set) var count = 0
    /// Bytes of the head PDU already sent.
    var sent = 0

    public init() {}

    /// Queues a B-frame: basic header (length, channel id) + payload.
    public mutating func enqueue(handle: UInt16, channel: UInt16, payload: UnsafeRawBufferPointer) -> Bool {
        guard count < ACLTransmitQueue.capacity, payload.count + 4 <= L2CAPReassembler.capacity else { return false }
        let slot = (head + count) % ACLTransmitQueue.capacity
        var pdu = FixedBytes<260>()
        pdu.appendUInt16(UInt16(payload.count))
        pdu.appendUInt16(channel)
        pdu.append(payload)
        pdus[slot] = pdu
        handles[slot] = handle
        count += 1
        return true
    }

    /// Writes the next ACL fragment (H4 framed) into `packet`; returns its handle.
    public mutating func nextFragment(maxLength: Int, into packet: inout HCIPacket) -> UInt16? {
        guard count > 0, maxLength > 0 else { return nil }
        let handle = handles[head]
        let total = pdus[head].count
        let length = min(maxLength, total - sent)
        // First fragment: PB 0b00 (host to controller, non-flushable start); then 0b01.
        let boundary: UInt16 = sent == 0 ? 0x0000 : 0x1000
        packet.removeAll()
        packet.append(H4PacketType.acl)
        packet.appendUInt16(handle | boundary)
        packet.appendUInt16(UInt16(length))
        let start = sent
        pdus[head].withBytes { packet.append(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)])) }
        sent += length
        if sent == total {
            sent = 0
            head = (head + 1) % ACLTransmitQueue.capacity
            count -= 1
        }
        return handle
    }

    /// Drops every PDU of a link that went away (a partly sent head PDU included).
    public mutating func remove(handle: UInt16) {
        var kept = ACLTransmitQueue()
        var index = 0
        while index < count {
            let slot = (head + index) % ACLTransmitQueue.capacity
            if handles[slot] != handle {
                if index == 0, sent > 0 {
                    kept.sent = sent  // keep the partly sent head of another link intact
                }
                kept.handles[kept.count] = handles[slot]
                kept.pdus[kept.count] = pdus[slot]
                kept.count += 1
            }
            index += 1
        }
        self = kept
    }

    public mutating func removeAll() {
        head = 0
        count = 0
        sent = 0
    }
}
