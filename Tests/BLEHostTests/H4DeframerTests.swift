import Testing
@testable import BLEHost
import TestSupport

/// Cuts `reads` as the driver does; returns (type, bytes, in place?) per packet.
private func cut(_ reads: [[UInt8]], _ deframer: inout H4Deframer) -> [(UInt8, [UInt8], Bool)] {
    var out: [(UInt8, [UInt8], Bool)] = []
    for read in reads {
        read.withRaw { bytes in
            var offset = 0
            while true {
                switch deframer.next(bytes, offset: &offset) {
                case .none: return
                case .inPlace(let type, let start, let count): out.append((type, Array(bytes[start..<(start + count)]), true))
                case .buffered(let type): out.append((type, deframer.withPacket { Array($0) }, false))
                }
            }
        }
    }
    return out
}

@Suite struct H4DeframerTests {
    // Command Complete for HCI_Reset (Core Vol 4 Part E §7.7.14, §7.3.2) and an ACL packet.
    static let reset = hex("04 0e 04 01 03 0c 00")
    static let acl = hex("02 40 20 07 00 03 00 04 00 0a 03 00")
    static let stream = reset + acl + hex("04 13 05 01 40 00 01 00")

    /// Each packet `chunks` holds, with its indicator byte.
    func collect(_ chunks: [[UInt8]], into deframer: inout H4Deframer) -> [[UInt8]] {
        cut(chunks, &deframer).map { [$0.0] + $0.1 }
    }

    @Test func wholeStream() {
        var deframer = H4Deframer()
        let packets = collect([Self.stream], into: &deframer)
        #expect(packets == [Self.reset, Self.acl, hex("04 13 05 01 40 00 01 00")])
    }

    @Test func everySplitPoint() {
        for split in 0...Self.stream.count {
            var deframer = H4Deframer()
            let packets = collect([Array(Self.stream[..<split]), Array(Self.stream[split...])], into: &deframer)
            #expect(packets.count == 3, "split at \(split)")
            #expect(packets.flatMap { $0 } == Self.stream)
        }
    }

    @Test func byteAtATime() {
        var deframer = H4Deframer()
        let packets = collect(Self.stream.map { [$0] }, into: &deframer)
        #expect(packets.flatMap { $0 } == Self.stream)
    }

    @Test func garbageIndicatorsAreDroppedAndCounted() {
        var deframer = H4Deframer()
        let packets = collect([hex("00 ff 7f") + Self.reset], into: &deframer)
        #expect(packets == [Self.reset])
        #expect(deframer.droppedBytes == 3)
    }

    @Test func oversizeACLIsSkippedByItsLength() {
        var deframer = H4Deframer()
        // ACL announcing 2000 bytes: larger than the buffer, skipped whole, the stream stays in sync.
        let big = hex("02 40 20 d0 07") + [UInt8](repeating: 0xAB, count: 2000)
        let packets = collect([big + Self.reset], into: &deframer)
        #expect(packets == [Self.reset])
        #expect(deframer.droppedPackets == 1)
    }

    @Test func emptyEventPayload() {
        var deframer = H4Deframer()
        #expect(collect([hex("04 1a 00") + Self.reset], into: &deframer) == [hex("04 1a 00"), Self.reset])
    }
}

/// Packets are cut out of the read where they lie; only one split across two
/// reads is gathered in the de-framer's buffer.
@Suite struct H4DeframerInPlaceTests {
    @Test func wholePacketsAreReturnedWhereTheyLie() {
        var d = H4Deframer()
        let out = cut([hex("04 0e 04 01 03 0c 00 02 40 20 03 00 aa bb cc")], &d)
        #expect(out.map(\.0) == [0x04, 0x02])
        #expect(out[0].1 == hex("0e 04 01 03 0c 00") && out[0].2)
        #expect(out[1].1 == hex("40 20 03 00 aa bb cc") && out[1].2)
        let (mid, errors) = (d.isMidPacket, d.framingErrors)
        #expect(!mid && errors == 0)
    }

    @Test func packetsSplitAcrossReadsAreGatheredAtEverySplitPoint() {
        let stream = hex("04 0e 04 01 03 0c 00 02 40 20 03 00 aa bb cc 04 05 04 00 40 00 13")
        for split in 0...stream.count {
            var d = H4Deframer()
            let out = cut([Array(stream[..<split]), Array(stream[split...])], &d)
            #expect(out.map(\.1) == [hex("0e 04 01 03 0c 00"), hex("40 20 03 00 aa bb cc"), hex("05 04 00 40 00 13")])
            #expect(out.filter { !$0.2 }.count <= 1, "only the packet cut by the read boundary is copied")
        }
    }

    @Test func unknownIndicatorAndOversizedPacketCountAsFramingErrors() {
        var d = H4Deframer()
        _ = cut([hex("07 99")], &d)
        let errors = d.framingErrors
        #expect(errors == 2)
        var e = H4Deframer()
        _ = cut([hex("02 40 20 ff 0f")], &e)  // 4095 bytes: larger than any real packet
        let oversized = e.framingErrors
        #expect(oversized == 1)
    }

    @Test func aHeaderWithoutItsPayloadLeavesTheDeframerMidPacket() {
        var d = H4Deframer()
        _ = cut([hex("02 40 20 fc 03 01 02")], &d)
        let (mid, errors) = (d.isMidPacket, d.framingErrors)
        #expect(mid)
        #expect(errors == 0)
    }
}

/// The one reader of HCI packet lengths, for each packet type's header.
@Suite struct HCIPacketLengthTests {
    @Test func headersAndDeclaredLengths() {
        #expect(HCIPacketLength.header(H4PacketType.event) == 2)
        #expect(HCIPacketLength.header(H4PacketType.acl) == 4)
        #expect(HCIPacketLength.header(H4PacketType.iso) == 4)
        #expect(HCIPacketLength.header(H4PacketType.sco) == 3)
        #expect(HCIPacketLength.header(H4PacketType.command) == 3)
        #expect(HCIPacketLength.header(0x00) == 0 && HCIPacketLength.header(0x06) == 0)
        [UInt8](arrayLiteral: 0x0E, 0xFF).withUnsafeBytes { #expect(HCIPacketLength.payload(H4PacketType.event, $0) == 255) }
        [UInt8](arrayLiteral: 0x40, 0x20, 0x04, 0x01).withUnsafeBytes { #expect(HCIPacketLength.payload(H4PacketType.acl, $0) == 0x104) }
        [UInt8](arrayLiteral: 0x03, 0x0C, 0x07).withUnsafeBytes { #expect(HCIPacketLength.payload(H4PacketType.command, $0) == 7) }
        // ISO: 14 bits of length, the top two are flags.
        [UInt8](arrayLiteral: 0x40, 0x00, 0x05, 0xC0).withUnsafeBytes { #expect(HCIPacketLength.payload(H4PacketType.iso, $0) == 5) }
        [UInt8](arrayLiteral: 0x13, 0x01, 0x00).withUnsafeBytes { #expect(HCIPacketLength.isWhole(type: H4PacketType.event, $0)) }
        [UInt8](arrayLiteral: 0x13, 0x02, 0x00).withUnsafeBytes { #expect(!HCIPacketLength.isWhole(type: H4PacketType.event, $0)) }
        [UInt8](arrayLiteral: 0x03, 0x0C, 0x00).withUnsafeBytes { #expect(!HCIPacketLength.isWhole(type: H4PacketType.command, $0)) }
    }
}
