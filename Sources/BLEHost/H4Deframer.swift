/// HCI packet indicators of the UART transport (Core Vol 4 Part A §2).
public enum H4PacketType {
    public static let command: UInt8 = 0x01
    public static let acl: UInt8 = 0x02
    public static let sco: UInt8 = 0x03
    public static let event: UInt8 = 0x04
    public static let iso: UInt8 = 0x05
}

/// Splits an H4 byte stream into HCI packets, whatever the read boundaries.
///
/// The stream carries no resynchronisation marks, so the packet header decides
/// the length. An unknown indicator byte is dropped (and counted) so a stream with
/// garbage recovers at the next valid packet; a packet larger than the buffer is
/// skipped by its declared length rather than truncated.
public struct H4Deframer {
    /// Largest packet kept: an ACL packet of 4 + 1024 bytes (events are 2 + 255).
    public static let capacity = 1028

    enum State { case indicator, header, payload, discard }

    var state: State = .indicator
    var type: UInt8 = 0
    var headerLength = 0
    var needed = 0
    var buffer = FixedBytes<1028>()
    public private(set) var droppedBytes = 0
    public private(set) var droppedPackets = 0
    /// Set for a stream that carries one packet type without indicators: a USB
    /// endpoint (events on interrupt IN, ACL on bulk IN; Core Vol 4 Part B §2.1),
    /// where packets may span USB transfers and are delimited by their headers.
    let fixedType: UInt8?

    public init() { fixedType = nil }

    /// A de-framer for one endpoint's stream; it delivers packets of `type`.
    public init(endpointOf type: UInt8) {
        fixedType = type
        expectNext()
    }

    mutating func expectNext() {
        guard let type = fixedType else {
            state = .indicator
            return
        }
        begin(type, header: type == H4PacketType.event ? 2 : 4)
    }

    /// Feeds bytes; `deliver` gets each complete packet (without the indicator byte).
    public mutating func push(_ bytes: UnsafeRawBufferPointer, deliver: (UInt8, UnsafeRawBufferPointer) -> Void) {
        for byte in bytes {
            switch state {
            case .indicator:
                switch byte {
                case H4PacketType.event: begin(byte, header: 2)
                case H4PacketType.acl: begin(byte, header: 4)
                case H4PacketType.sco: begin(byte, header: 3)
                case H4PacketType.iso: begin(byte, header: 4)
                case H4PacketType.command: begin(byte, header: 3)
                default: droppedBytes += 1
                }
            case .header:
                buffer.append(byte)
                if buffer.count == headerLength {
                    let payload = payloadLength()
                    if headerLength + payload > H4Deframer.capacity {
                        droppedPackets += 1
                        needed = payload
                        if needed == 0 { expectNext() } else { state = .discard }
                    } else if payload == 0 {
                        finish(deliver)
                    } else {
                        needed = payload
                        state = .payload
                    }
                }
            case .payload:
                buffer.append(byte)
                needed -= 1
                if needed == 0 { finish(deliver) }
            case .discard:
                needed -= 1
                if needed == 0 { expectNext() }
            }
        }
    }

    mutating func begin(_ type: UInt8, header: Int) {
        self.type = type
        headerLength = header
        buffer.removeAll()
        state = .header
    }

    func payloadLength() -> Int {
        switch type {
        case H4PacketType.event: return Int(buffer[1])
        case H4PacketType.acl: return Int(buffer[2]) | Int(buffer[3]) &<< 8
        case H4PacketType.sco, H4PacketType.command: return Int(buffer[2])
        default: return (Int(buffer[2]) | Int(buffer[3]) &<< 8) & 0x3FFF  // ISO: 14-bit length
        }
    }

    mutating func finish(_ deliver: (UInt8, UnsafeRawBufferPointer) -> Void) {
        let packetType = type
        buffer.withBytes { deliver(packetType, $0) }
        expectNext()
        if fixedType == nil { buffer.removeAll() }
    }
}
