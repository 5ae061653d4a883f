/// Outgoing L2CAP PDUs, fragmented to the controller's ACL data length only when
/// a buffer credit is available (Core Vol 4 Part E §4.1.1, Vol 3 Part A §7.2).
///
/// Responses are built where they are sent (as BTstack's att_server.c does):
/// `reserve` hands out the next free slot, the ATT server or signaling writes
/// the L2CAP payload straight into `pdus[slot]`, and `commit` queues it. The
/// basic L2CAP header (length, channel) is not stored: `nextFragment` writes it
/// in front of the first fragment. Fixed capacity: a full queue refuses the PDU
/// and the caller reports it.
public struct ACLTransmitQueue: ~Copyable {
    let pin = InPlacePin()
    public static var capacity: Int { Capacity.transmitPDUs }

    var handles: Capacity.TransmitSlots<UInt16> = InlineArray(repeating: 0)
    var channels: Capacity.TransmitSlots<UInt16> = InlineArray(repeating: 0)
    /// L2CAP payloads (ATT PDUs, signaling, SMP); at most ATT.maxMTU + headroom.
    var pdus: Capacity.TransmitSlots<Capacity.ATTPDUStore> = InlineArray { _ in Capacity.ATTPDUStore() }
    var head = 0
    public private(set) var count = 0
    /// Bytes of the head PDU (basic header included) already sent.
    var sent = 0

    public init() {}

    /// The slot the next PDU is written into (emptied), or nil when the queue is full.
    mutating func reserve(handle: UInt16, channel: UInt16) -> Int? {
        guard count < ACLTransmitQueue.capacity else { return nil }
        let slot = slotIndex(count)
        handles[slot] = handle
        channels[slot] = channel
        pdus[slot].removeAll()
        return slot
    }

    /// The slot of the `index`th PDU from the head: modulo the capacity as
    /// unsigned numbers, so the slot is in range by construction (no traps).
    func slotIndex(_ index: Int) -> Int {
        Int(bitPattern: (UInt(bitPattern: head) &+ UInt(bitPattern: index)) % UInt(bitPattern: ACLTransmitQueue.capacity))
    }

    /// PDUs of one link waiting (a partly sent head included).
    func count(handle: UInt16) -> Int {
        var n = 0
        for index in 0..<count where handles[slotIndex(index)] == handle { n += 1 }
        return n
    }

    /// ACL packets still to send for one link at this data length (what is
    /// left of a partly sent head included).
    func fragments(handle: UInt16, maxLength: Int) -> Int {
        guard maxLength > 0 else { return 0 }
        var n = 0
        for index in 0..<count where handles[slotIndex(index)] == handle {
            let slot = slotIndex(index)
            let left = 4 + pdus[slot].count - (index == 0 ? sent : 0)
            n += (left + maxLength - 1) / maxLength
        }
        return n
    }

    /// Queues the PDU written into the slot `reserve` returned.
    mutating func commit() { count &+= 1 }  // after `reserve`: < capacity

    /// Queues a copy of a payload (the paths that did not build in place).
    public mutating func enqueue(handle: UInt16, channel: UInt16, payload: UnsafeRawBufferPointer) -> Bool {
        guard let slot = reserve(handle: handle, channel: channel), pdus[slot].append(payload) else { return false }
        commit()
        return true
    }

    /// Writes the next ACL fragment (H4 framed) into `packet`; returns its handle.
    public mutating func nextFragment(maxLength: Int, into packet: inout Capacity.HCIPacket) -> UInt16? {
        guard count > 0, maxLength > 0 else { return nil }
        let handle = handles[head]
        let payloadLength = pdus[head].count
        // Lengths of one PDU (0 ≤ sent < total ≤ 4 + ATT_MTU): no sum or difference here overflows.
        let total = 4 &+ payloadLength
        let length = min(maxLength, total &- sent)
        // First fragment: PB 0b00 (host to controller, non-flushable start); then 0b01.
        let boundary: UInt16 = sent == 0 ? 0x0000 : 0x1000
        packet.removeAll()
        packet.append(H4PacketType.acl)
        packet.appendUInt16(handle | boundary)
        packet.appendUInt16(UInt16(length))
        var from = sent
        if from < 4 {
            // The basic header goes out with the first fragment (maxLength >= 4 in practice).
            var header = FixedBytes<4>()
            header.appendUInt16(UInt16(payloadLength))
            header.appendUInt16(channels[head])
            header.withBytes { packet.append(UnsafeRawBufferPointer(rebasing: $0[from..<min(4, from &+ length)])) }
            from = min(4, from &+ length)
        }
        let end = sent &+ length
        if end > from {
            pdus[head].withBytes { packet.append(UnsafeRawBufferPointer(rebasing: $0[(from &- 4)..<(end &- 4)])) }
        }
        sent = end
        if sent == total {
            sent = 0
            head = slotIndex(1)
            count &-= 1
        }
        return handle
    }

    /// Drops every PDU of a link that went away (a partly sent head PDU included),
    /// compacting the others in place, in order.
    public mutating func remove(handle: UInt16) {
        var kept = 0
        var index = 0
        while index < count {
            let from = slotIndex(index)
            if handles[from] != handle {
                let to = slotIndex(kept)
                if to != from {
                    handles[to] = handles[from]
                    channels[to] = channels[from]
                    pdus.swapAt(to, from)
                }
                kept += 1
            } else if index == 0 {
                sent = 0  // the partly sent head belonged to the link that went away
            }
            index += 1
        }
        count = kept
    }

    public mutating func removeAll() {
        head = 0
        count = 0
        sent = 0
    }
}
