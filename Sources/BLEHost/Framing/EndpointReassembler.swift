/// Cuts one USB IN endpoint's transfers into HCI packets of one type (events on
/// interrupt IN, ACL on bulk IN; Core Vol 4 Part B §2.1). A packet that lies
/// whole in a transfer is handed over where it lies; one that spans several
/// transfers (a 70-byte event in 16-byte interrupt packets) is gathered in the
/// reassembler's own buffer and handed over from there.
///
/// USB ends a transfer with a short packet (USB 2.0 §5.8.3), so a transfer
/// shorter than the endpoint's packet size that leaves a packet unfinished
/// means the packet was cut short: it is dropped and counted. So is a packet
/// whose header announces more than the buffer holds (the rest of its
/// transfer is skipped), and a transfer with bytes after a complete packet
/// that cannot begin another.
public struct EndpointReassembler: ~Copyable {
    /// Largest packet kept (`Capacity.ReceivedPacketStore`).
    public static var capacity: Int { Capacity.ReceivedPacketStore.capacityCount }

    public let type: UInt8
    /// wMaxPacketSize of the endpoint: a shorter transfer ends the packet.
    public let packetSize: Int
    let headerLength: Int
    var buffer = Capacity.ReceivedPacketStore()
    /// Bytes still missing from the packet in `buffer` (0: none begun, or only a partial header).
    var missing = 0
    /// Skipping an oversize packet until its transfer ends.
    var discarding = false
    public private(set) var droppedPackets = 0
    /// Transfers that overflowed (babble), each dropped unread (`babbled`).
    public private(set) var babbledTransfers = 0

    public init(type: UInt8, packetSize: Int) {
        self.type = type
        self.packetSize = max(1, packetSize)
        headerLength = HCIPacketLength.header(type)
    }

    /// Something of a packet has arrived and the rest is awaited.
    public var isMidPacket: Bool { !buffer.isEmpty }

    /// Forgets a packet begun (after a stall or a port reset).
    public mutating func reset() {
        buffer.removeAll()
        missing = 0
        discarding = false
    }

    /// A transfer that ended in babble (the device sent more than asked:
    /// LIBUSB_TRANSFER_OVERFLOW, -EOVERFLOW): its bytes are not fed, it is
    /// counted, and a packet begun before it is lost with it (dropped, counted)
    /// as after a stall, so the next transfer starts a packet again.
    public mutating func babbled() {
        babbledTransfers += 1
        droppedPackets += 1
        if isMidPacket || discarding { reset() }
    }

    /// Feeds one completed transfer; `deliver` gets each complete packet
    /// (without an H4 indicator) before the call returns.
    public mutating func feed(_ transfer: UnsafeRawBufferPointer, deliver: (UInt8, UnsafeRawBufferPointer) -> Void) {
        let short = transfer.count < packetSize
        // Offsets stay within the transfer and lengths within a packet's 4 + 65,535
        // bytes: the arithmetic below cannot overflow (no trap per step).
        var offset = 0
        if discarding {
            if short { discarding = false }
            return
        }
        while offset < transfer.count {
            if buffer.isEmpty {
                // A packet begins: whole here, or gathered.
                let rest = transfer.count &- offset
                if rest >= headerLength {
                    let length = headerLength &+ payloadLength(UnsafeRawBufferPointer(rebasing: transfer[offset...]))
                    if length > EndpointReassembler.capacity {
                        droppedPackets += 1
                        discarding = !short
                        return
                    }
                    if rest >= length {
                        deliver(type, UnsafeRawBufferPointer(rebasing: transfer[offset..<(offset &+ length)]))
                        offset &+= length
                        continue
                    }
                    missing = length &- rest
                }
                buffer.append(UnsafeRawBufferPointer(rebasing: transfer[offset...]))
                offset = transfer.count
            } else {
                let rest = transfer.count &- offset
                if missing == 0 {
                    // The header itself was split: complete it first.
                    let take = min(headerLength &- buffer.count, rest)
                    buffer.append(UnsafeRawBufferPointer(rebasing: transfer[offset..<(offset &+ take)]))
                    offset &+= take
                    guard buffer.count == headerLength else { continue }
                    let length = headerLength &+ payloadLength()
                    if length > EndpointReassembler.capacity {
                        droppedPackets += 1
                        buffer.removeAll()
                        discarding = !short
                        return
                    }
                    missing = length &- headerLength
                    if missing == 0 { finish(deliver) }
                    continue
                }
                let take = min(missing, rest)
                buffer.append(UnsafeRawBufferPointer(rebasing: transfer[offset..<(offset &+ take)]))
                offset &+= take
                missing &-= take
                if missing == 0 { finish(deliver) }
            }
        }
        if short, !buffer.isEmpty {
            // The transfer ended and the packet did not: it was cut short.
            droppedPackets += 1
            reset()
        }
    }

    mutating func finish(_ deliver: (UInt8, UnsafeRawBufferPointer) -> Void) {
        buffer.withBytes { deliver(type, $0) }
        buffer.removeAll()
        missing = 0
    }

    func payloadLength(_ header: UnsafeRawBufferPointer) -> Int { HCIPacketLength.payload(type, header) }

    /// The payload length the gathered header announces, read in place.
    func payloadLength() -> Int {
        buffer.withBytes { HCIPacketLength.payload(type, $0) }
    }
}
