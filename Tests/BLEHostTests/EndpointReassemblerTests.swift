import Testing
@testable import BLEHost
import TestSupport

/// USB IN endpoints (Core Vol 4 Part B §2.1): events on interrupt IN (16-byte
/// packets here), ACL on bulk IN (64-byte packets). Headers as Vol 4 Part E §5.4:
/// an event is code, parameter length (1 byte); ACL is handle+flags (2), length (2, LE).
@Suite struct EndpointReassemblerTests {
    /// One delivered packet: its bytes, and where it lay in its transfer when it
    /// was handed over in place (nil: from the reassembler's own buffer).
    struct Delivery: Equatable, CustomStringConvertible {
        var type: UInt8
        var bytes: [UInt8]
        var inPlaceAt: Int?
        var description: String { "\(type) \(bytes.count) bytes at \(inPlaceAt.map(String.init) ?? "buffer")" }
    }

    func feed(_ transfers: [[UInt8]], into r: inout EndpointReassembler) -> [Delivery] {
        var out: [Delivery] = []
        for transfer in transfers {
            transfer.withRaw { raw in
                r.feed(raw) { type, packet in
                    var at: Int? = nil
                    if let base = raw.baseAddress, let start = packet.baseAddress,
                       start >= base, start + packet.count <= base + raw.count {
                        at = start - base
                    }
                    out.append(Delivery(type: type, bytes: Array(packet), inPlaceAt: at))
                }
            }
        }
        return out
    }

    static func events() -> EndpointReassembler { EndpointReassembler(type: H4PacketType.event, packetSize: 16) }
    static func acl() -> EndpointReassembler { EndpointReassembler(type: H4PacketType.acl, packetSize: 64) }

    /// Command Complete for HCI_Reset (§7.7.14, §7.3.2).
    static let resetComplete = hex("0e 04 01 03 0c 00")
    /// Number Of Completed Packets: handle 0x0040, 1 packet (§7.7.19).
    static let completedPackets = hex("13 05 01 40 00 01 00")
    /// Disconnection Complete: handle 0x0040, reason 0x13 (§7.7.5).
    static let disconnection = hex("05 04 00 40 00 13")
    /// Data Buffer Overflow, ACL (§7.7.26).
    static let overflow = hex("1a 01 01")
    /// Command Complete for Read Local Supported Commands (§7.4.2): 2 + 68 = 70 bytes.
    static let supportedCommands = hex("0e 44 01 02 10 00") + (0..<64).map { UInt8($0 | 0x80) }
    /// LE Advertising Report (§7.7.65.2) with 18 bytes of data: 2 + 30 = 32 bytes.
    static let advertisingReport = hex("3e 1e 02 01 00 01 c6 18 00 00 00 c0 12")
        + hex("02 01 06 0e 09 49 54 43 42 20 4d 61 67 69 63 20 38 00") + [0xC5]

    /// An ACL packet on handle 0x0040, first fragment (PB 0b10), carrying `count` payload bytes.
    static func aclPacket(_ count: Int, fill: UInt8 = 0x5A) -> [UInt8] {
        [0x40, 0x20, UInt8(count & 0xFF), UInt8(count >> 8)] + (0..<count).map { UInt8(truncatingIfNeeded: $0) ^ fill }
    }

    /// Cuts `bytes` into `size`-byte transfers, the last one what remains.
    static func transfers(_ bytes: [UInt8], size: Int) -> [[UInt8]] {
        stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }

    @Test func vectorsHaveTheirDeclaredLengths() {
        #expect(Self.supportedCommands.count == 70)
        #expect(Self.advertisingReport.count == 32)
        #expect(Self.aclPacket(251).count == 255)
    }

    @Test func wholeEventIsDeliveredInPlace() {
        var r = Self.events()
        let out = feed([Self.resetComplete], into: &r)
        #expect(out == [Delivery(type: H4PacketType.event, bytes: Self.resetComplete, inPlaceAt: 0)])
        #expect(r.droppedPackets == 0)
        #expect(r.isMidPacket == false)
    }

    @Test func seventyByteEventInFiveTransfersIsDeliveredOnceIntact() {
        var r = Self.events()
        let parts = Self.transfers(Self.supportedCommands, size: 16)
        #expect(parts.map(\.count) == [16, 16, 16, 16, 6])
        for (i, part) in parts.dropLast().enumerated() {
            #expect(feed([part], into: &r).isEmpty, "transfer \(i) delivers nothing yet")
            #expect(r.isMidPacket == true)
        }
        let out = feed([parts.last!], into: &r)
        #expect(out == [Delivery(type: H4PacketType.event, bytes: Self.supportedCommands, inPlaceAt: nil)])
        #expect(r.droppedPackets == 0)
        #expect(r.isMidPacket == false)
        // The next event is delivered in place again.
        #expect(feed([Self.resetComplete], into: &r) == [Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: 0)])
    }

    @Test func thirtyTwoByteEventInTwoFullTransfersIsDelivered() {
        // No short packet ends it: the header's length alone says it is complete.
        var r = Self.events()
        let parts = Self.transfers(Self.advertisingReport, size: 16)
        #expect(parts.map(\.count) == [16, 16])
        #expect(feed([parts[0]], into: &r).isEmpty)
        #expect(feed([parts[1]], into: &r) == [Delivery(type: 4, bytes: Self.advertisingReport, inPlaceAt: nil)])
        #expect(r.droppedPackets == 0)
        #expect(r.isMidPacket == false)
        // A zero-length packet after it changes nothing.
        #expect(feed([[]], into: &r).isEmpty)
        #expect(r.droppedPackets == 0)
    }

    @Test func aclSpanningBulkPackets() {
        // 255 bytes (LE Data Length 251): 64 + 64 + 64 + 63.
        var r = Self.acl()
        let big = Self.aclPacket(251)
        let parts = Self.transfers(big, size: 64)
        #expect(parts.map(\.count) == [64, 64, 64, 63])
        #expect(feed(parts, into: &r) == [Delivery(type: H4PacketType.acl, bytes: big, inPlaceAt: nil)])
        // 128 bytes: exactly two full bulk packets, no short one.
        let even = Self.aclPacket(124, fill: 0x33)
        #expect(feed(Self.transfers(even, size: 64), into: &r) == [Delivery(type: 2, bytes: even, inPlaceAt: nil)])
        // The largest packet kept: 4 + 1024 bytes, 16 full packets and a 4-byte one.
        let largest = Self.aclPacket(1024, fill: 0x77)
        let out = feed(Self.transfers(largest, size: 64), into: &r)
        #expect(out == [Delivery(type: 2, bytes: largest, inPlaceAt: nil)])
        #expect(out.first?.bytes.count == EndpointReassembler.capacity)
        // A whole small ACL packet lies in place.
        let small = hex("40 20 07 00 03 00 04 00 0a 03 00")
        #expect(feed([small], into: &r) == [Delivery(type: 2, bytes: small, inPlaceAt: 0)])
        #expect(r.droppedPackets == 0)
    }

    @Test func twoPacketsInOneTransfer() {
        var r = Self.events()
        let transfer = Self.resetComplete + Self.completedPackets
        #expect(transfer.count == 13)
        #expect(feed([transfer], into: &r) == [
            Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: 0),
            Delivery(type: 4, bytes: Self.completedPackets, inPlaceAt: 6),
        ])
        var a = Self.acl()
        let one = hex("40 20 05 00 01 00 04 00 0a"), two = hex("40 10 02 00 01 00")
        #expect(feed([one + two], into: &a) == [
            Delivery(type: 2, bytes: one, inPlaceAt: 0), Delivery(type: 2, bytes: two, inPlaceAt: one.count),
        ])
        #expect(r.droppedPackets == 0 && a.droppedPackets == 0)
    }

    @Test func headerSplitAcrossTransfers() {
        // Event: three packets and the first byte of a fourth fill a 16-byte packet.
        var r = Self.events()
        let first = Self.disconnection + Self.resetComplete + Self.overflow + [0x0E]
        #expect(first.count == 16)
        #expect(feed([first, hex("04 01 03 0c 00")], into: &r) == [
            Delivery(type: 4, bytes: Self.disconnection, inPlaceAt: 0),
            Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: 6),
            Delivery(type: 4, bytes: Self.overflow, inPlaceAt: 12),
            Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: nil),
        ])
        #expect(r.droppedPackets == 0)

        // ACL: the 4-byte header split after 1, 2 and 3 bytes at the end of a full bulk packet.
        for cut in 1...3 {
            var a = Self.acl()
            let lead = Self.aclPacket(64 - 4 - cut)
            let next = Self.aclPacket(10, fill: 0xC3)
            let stream = lead + next
            let parts = [Array(stream[..<64]), Array(stream[64...])]
            #expect(feed(parts, into: &a) == [
                Delivery(type: 2, bytes: lead, inPlaceAt: 0), Delivery(type: 2, bytes: next, inPlaceAt: nil),
            ], "header cut after \(cut)")
            #expect(a.droppedPackets == 0)
        }
        // An event with no parameters whose header is split: complete when its second byte arrives.
        var e = Self.events()
        let fill = Self.disconnection + Self.overflow + Self.resetComplete
        #expect(feed([fill + [0x1A], [0x00]], into: &e).map(\.bytes)
                    == [Self.disconnection, Self.overflow, Self.resetComplete, hex("1a 00")])
        #expect(e.droppedPackets == 0)
        #expect(e.isMidPacket == false)
    }

    @Test func shortTransferCutsPacketShort() {
        var r = Self.events()
        // 16 bytes of the 70-byte event, then a short transfer: the packet ended early.
        let parts = Self.transfers(Self.supportedCommands, size: 16)
        #expect(feed([parts[0], Array(parts[1].prefix(10))], into: &r).isEmpty)
        #expect(r.droppedPackets == 1)
        #expect(r.isMidPacket == false)
        // The next packet still arrives, in place.
        #expect(feed([Self.resetComplete], into: &r) == [Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: 0)])
        #expect(r.droppedPackets == 1)

        // A zero-length packet ends a transfer too.
        #expect(feed([parts[0], []], into: &r).isEmpty)
        #expect(r.droppedPackets == 2)

        // Junk after a complete packet that cannot begin another: 1 byte, then a header announcing more.
        #expect(feed([Self.resetComplete + [0xFF]], into: &r).map(\.bytes) == [Self.resetComplete])
        #expect(r.droppedPackets == 3)
        #expect(feed([Self.resetComplete + hex("0e 05 01")], into: &r).map(\.bytes) == [Self.resetComplete])
        #expect(r.droppedPackets == 4)
        #expect(feed([Self.completedPackets], into: &r).map(\.bytes) == [Self.completedPackets])
        #expect(r.droppedPackets == 4)

        // ACL: 100 bytes announced, 64 + 20 arrive.
        var a = Self.acl()
        let cut = Array(Self.aclPacket(96).prefix(84))
        #expect(feed(Self.transfers(cut, size: 64), into: &a).isEmpty)
        #expect(a.droppedPackets == 1)
        let next = Self.aclPacket(3)
        #expect(feed([next], into: &a) == [Delivery(type: 2, bytes: next, inPlaceAt: 0)])
    }

    @Test func oversizeHeaderSkipsTheRestOfItsTransfer() {
        var a = Self.acl()
        // Length 1025: 1029 bytes, one more than any packet kept. 16 full packets and a 5-byte one.
        let huge = Self.aclPacket(1025)
        let parts = Self.transfers(huge, size: 64)
        #expect(parts.count == 17 && parts.last!.count == 5)
        #expect(feed([parts[0]], into: &a).isEmpty)
        #expect(a.droppedPackets == 1)
        #expect(a.isMidPacket == false)
        // Skipped up to and including the short packet, without further counts,
        // even where a skipped packet looks like a valid header.
        let lookalike = Self.aclPacket(60)
        #expect(feed(Array(parts[1..<16]) + [lookalike], into: &a).isEmpty)
        #expect(feed([parts[16]], into: &a).isEmpty)
        #expect(a.droppedPackets == 1)
        // The next transfer begins a packet again.
        let next = Self.aclPacket(10)
        #expect(feed([next], into: &a) == [Delivery(type: 2, bytes: next, inPlaceAt: 0)])
        #expect(a.droppedPackets == 1)

        // Oversize in a short transfer: that transfer ended it, the next one is read.
        var b = Self.acl()
        #expect(feed([hex("40 20 ff ff 00 00"), next], into: &b).map(\.bytes) == [next])
        #expect(b.droppedPackets == 1)

        // Oversize after a packet in the same full transfer: the packet before it is delivered.
        var c = Self.acl()
        let before = Self.aclPacket(20)
        let full = before + hex("40 20 01 04") + [UInt8](repeating: 0, count: 64 - 24 - 4)
        #expect(feed([full, Array(repeating: 0x40, count: 64), hex("01 02")], into: &c).map(\.bytes) == [before])
        #expect(c.droppedPackets == 1)
        #expect(feed([next], into: &c).map(\.bytes) == [next])

        // Oversize header split across transfers: found on its second half, the rest skipped.
        var d = Self.acl()
        let lead = Self.aclPacket(58)
        #expect(feed([lead + hex("40 20"), hex("01 04") + [UInt8](repeating: 0xEE, count: 62), hex("ee")], into: &d)
                    .map(\.bytes) == [lead])
        #expect(d.droppedPackets == 1)
        #expect(feed([next], into: &d).map(\.bytes) == [next])
        #expect(d.droppedPackets == 1)
    }

    @Test func resetForgetsAPacketBegun() {
        var r = Self.events()
        #expect(feed([Array(Self.supportedCommands.prefix(16))], into: &r).isEmpty)
        #expect(r.isMidPacket == true)
        r.reset()
        #expect(r.isMidPacket == false)
        #expect(feed([Self.resetComplete], into: &r) == [Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: 0)])
        #expect(r.droppedPackets == 0)

        // A split header is forgotten too.
        #expect(feed([Array(Self.supportedCommands.prefix(15)) + [0x0E]], into: &r).isEmpty)
        r.reset()
        #expect(feed([Self.completedPackets], into: &r).map(\.bytes) == [Self.completedPackets])

        // And skipping an oversize packet.
        var a = Self.acl()
        #expect(feed([hex("40 20 00 08") + [UInt8](repeating: 0, count: 60)], into: &a).isEmpty)
        a.reset()
        let next = Self.aclPacket(60)
        #expect(feed([next], into: &a) == [Delivery(type: 2, bytes: next, inPlaceAt: 0)])
        #expect(a.droppedPackets == 1)
    }

    /// Babble (a transfer that overflowed) between packets and in the middle of
    /// one: its bytes are never fed, each is counted, a packet begun is lost, and
    /// the next transfer begins a packet again.
    @Test func babbleIsDroppedAndCountedAndTheNextPacketIsWhole() {
        var r = Self.events()
        r.babbled()
        #expect(r.babbledTransfers == 1 && r.droppedPackets == 1 && !r.isMidPacket)
        #expect(feed([Self.completedPackets], into: &r) == [Delivery(type: 4, bytes: Self.completedPackets, inPlaceAt: 0)])

        // In the middle of a 70-byte event: that event is lost, the next one arrives whole.
        #expect(feed([Array(Self.supportedCommands.prefix(16))], into: &r).isEmpty)
        #expect(r.isMidPacket == true)
        r.babbled()
        #expect(r.isMidPacket == false)
        #expect(r.babbledTransfers == 2 && r.droppedPackets == 2)
        #expect(feed([Self.resetComplete], into: &r) == [Delivery(type: 4, bytes: Self.resetComplete, inPlaceAt: 0)])

        // While an oversize ACL packet is skipped: the skipping ends with the babble.
        var a = Self.acl()
        #expect(feed([hex("40 20 00 08") + [UInt8](repeating: 0, count: 60)], into: &a).isEmpty)
        a.babbled()
        let next = Self.aclPacket(60)
        #expect(feed([next], into: &a) == [Delivery(type: 2, bytes: next, inPlaceAt: 0)])
        #expect(a.babbledTransfers == 1 && a.droppedPackets == 2)
    }

    @Test func everyCutOfAStreamIntoFullPacketsDeliversTheSame() {
        // Several events back to back, cut at every packet size from 1 to 16:
        // all but the last transfer full, the last one short (or full).
        let packets = [Self.resetComplete, Self.supportedCommands, hex("1a 00"), Self.advertisingReport, Self.completedPackets]
        let stream = packets.flatMap { $0 }
        for size in 1...16 {
            var r = EndpointReassembler(type: H4PacketType.event, packetSize: size)
            var parts = Self.transfers(stream, size: size)
            if parts.last!.count == size { parts.append([]) }
            #expect(feed(parts, into: &r).map(\.bytes) == packets, "packet size \(size)")
            #expect(r.droppedPackets == 0, "packet size \(size)")
            #expect(r.isMidPacket == false)
        }
    }
}
