/// Splits an H4 byte stream into HCI packets, whatever the read boundaries.
///
/// The stream carries no resynchronisation marks, so the packet header decides
/// the length. An unknown indicator byte is dropped (and counted) so a stream with
/// garbage recovers at the next valid packet; a packet larger than the buffer is
/// skipped by its declared length rather than truncated.
public struct H4Deframer: ~Copyable {
    /// Largest packet kept (`Capacity.ReceivedPacketStore`).
    public static var capacity: Int { Capacity.ReceivedPacketStore.capacityCount }

    enum State { case indicator, header, payload, discard }

    var state: State = .indicator
    var type: UInt8 = 0
    var headerLength = 0
    var needed = 0
    var buffer = Capacity.ReceivedPacketStore()
    public private(set) var droppedBytes = 0
    public private(set) var droppedPackets = 0

    public init() {}

    /// Cuts the next packet out of `input` from `offset` (advanced past what was
    /// used). A packet that lies whole in the input is returned where it lies
    /// (`.inPlace`), without a copy; only a packet split across reads is gathered
    /// in the buffer (`.buffered`: read it with `withPacket` before the next call).
    public mutating func next(_ input: UnsafeRawBufferPointer, offset: inout Int) -> H4Frame {
        // 0 ≤ offset < input.count and lengths of a few hundred bytes: the
        // arithmetic below cannot overflow and the base is not nil.
        if state == .indicator, offset < input.count {
            let type = byteAt(input, offset)
            let header = HCIPacketLength.header(type)
            if header > 0, input.count &- offset > header {
                let start = offset &+ 1
                let payload = HCIPacketLength.payload(type, UnsafeRawBufferPointer(rebasing: input[start...]))
                let length = header &+ payload
                if length <= H4Deframer.capacity, input.count &- start >= length {
                    offset = start &+ length
                    return .inPlace(type: type, start: start, count: length)
                }
            }
        }
        while offset < input.count {
            let byte = byteAt(input, offset)
            offset &+= 1
            if consume(byte) {
                let packetType = type
                state = .indicator  // the buffer keeps the packet until the next one begins
                return .buffered(type: packetType)
            }
        }
        return .none
    }

    /// Part of a packet has arrived and the rest is awaited (or being skipped).
    public var isMidPacket: Bool { state != .indicator }

    /// Bytes that were not part of any packet: unknown indicators, and packets
    /// too large to be real. On a stream link either means lost framing.
    public var framingErrors: Int { droppedBytes + droppedPackets }

    /// The packet `next` returned as `.buffered`.
    public func withPacket<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { buffer.withBytes(body) }

    /// Runs the state machine over one byte; true when a packet is complete in the buffer.
    mutating func consume(_ byte: UInt8) -> Bool {
        switch state {
        case .indicator:
            let header = HCIPacketLength.header(byte)
            if header > 0 { begin(byte, header: header) } else { droppedBytes += 1 }
        case .header:
            buffer.append(byte)
            if buffer.count == headerLength {
                let payload = payloadLength()
                if headerLength + payload > H4Deframer.capacity {
                    droppedPackets += 1
                    needed = payload
                    state = needed == 0 ? .indicator : .discard
                } else if payload == 0 {
                    return true
                } else {
                    needed = payload
                    state = .payload
                }
            }
        case .payload:
            buffer.append(byte)
            needed -= 1
            if needed == 0 { return true }
        case .discard:
            needed -= 1
            if needed == 0 { state = .indicator }
        }
        return false
    }

    mutating func begin(_ type: UInt8, header: Int) {
        self.type = type
        headerLength = header
        buffer.removeAll()
        state = .header
    }

    /// The payload length its header announces, read in place.
    func payloadLength() -> Int {
        buffer.withBytes { HCIPacketLength.payload(type, $0) }
    }
}
