import Testing
@testable import BLEHost
import TestSupport

@Suite struct H4DeframerTests {
    // Command Complete for HCI_Reset (Core Vol 4 Part E §7.7.14, §7.3.2) and an ACL packet.
    static let reset = hex("04 0e 04 01 03 0c 00")
    static let acl = hex("02 40 20 07 00 03 00 04 00 0a 03 00")
    static let stream = reset + acl + hex("04 13 05 01 40 00 01 00")

    func collect(_ chunks: [[UInt8]], into deframer: inout H4Deframer) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        for chunk in chunks {
            chunk.withRaw { deframer.push($0) { type, packet in packets.append([type] + Array(packet)) } }
        }
        return packets
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

    @Test func endpointStreamsSplitByHeader() {
        // USB interrupt IN: a 13-byte event arrives as 16-byte packets with the next event glued on.
        var events = H4Deframer(endpointOf: H4PacketType.event)
        let stream = hex("0e 0a 01 09 10 00 f5 f4 f3 f2 f1 f0") + hex("0e 04 01 03 0c 00")
        let packets = collect([Array(stream[0..<16]), Array(stream[16...])], into: &events)
        #expect(packets == [hex("04 0e 0a 01 09 10 00 f5 f4 f3 f2 f1 f0"), hex("04 0e 04 01 03 0c 00")])

        var acl = H4Deframer(endpointOf: H4PacketType.acl)
        let aclStream = hex("40 20 05 00 01 00 04 00 0a") + hex("40 10 02 00 01 00")
        for split in 0...aclStream.count {
            var copy = acl
            let out = collect([Array(aclStream[..<split]), Array(aclStream[split...])], into: &copy)
            #expect(out == [hex("02 40 20 05 00 01 00 04 00 0a"), hex("02 40 10 02 00 01 00")])
        }
        acl = H4Deframer(endpointOf: H4PacketType.acl)
        #expect(collect([hex("40 20 00 00")], into: &acl) == [hex("02 40 20 00 00")])
    }
}

@Suite struct L2CAPReassemblerTests {
    func push(_ fragments: [([UInt8], Bool)], into reassembler: inout L2CAPReassembler) -> [(UInt16, [UInt8])] {
        var out: [(UInt16, [UInt8])] = []
        for (bytes, start) in fragments {
            bytes.withRaw { raw in
                switch reassembler.push(raw, isStart: start) {
                case .needMore: break
                case .completeInPlace(let cid): out.append((cid, Array(raw[4...])))
                case .completeInBuffer(let cid): out.append((cid, reassembler.withPayload { Array($0) }))
                }
            }
        }
        return out
    }

    @Test func singleFragment() {
        var r = L2CAPReassembler()
        let out = push([(hex("03 00 04 00 0a 03 00"), true)], into: &r)
        #expect(out.count == 1 && out[0].0 == 4 && out[0].1 == hex("0a 03 00"))
    }

    @Test func fragmentsIncludingSplitHeader() {
        let pdu = hex("05 00 04 00 12 0c 00 41 3f")
        for a in 1..<pdu.count {
            for b in a..<pdu.count {
                var r = L2CAPReassembler()
                let parts = [(Array(pdu[..<a]), true), (Array(pdu[a..<b]), false), (Array(pdu[b...]), false)]
                    .filter { !$0.0.isEmpty || $0.1 }
                let out = push(parts, into: &r)
                #expect(out.count == 1 && out[0].1 == hex("12 0c 00 41 3f"), "split \(a) \(b)")
                #expect(r.dropped == 0)
            }
        }
    }

    @Test func continuationWithoutStartIsDropped() {
        var r = L2CAPReassembler()
        #expect(push([(hex("0a 03 00"), false)], into: &r).isEmpty)
        #expect(r.dropped == 1)
        // The next proper PDU still works.
        #expect(push([(hex("01 00 04 00 0a"), true)], into: &r).count == 1)
    }

    @Test func moreBytesThanAnnouncedIsDropped() {
        var r = L2CAPReassembler()
        #expect(push([(hex("01 00 04 00 0a 0b"), true)], into: &r).isEmpty)
        #expect(r.dropped == 1)
        #expect(push([(hex("02 00 04 00 0a"), true), (hex("0b 0c"), false)], into: &r).isEmpty)
        #expect(r.dropped == 2)
    }

    @Test func newStartAbandonsIncompletePDU() {
        var r = L2CAPReassembler()
        let out = push([(hex("05 00 04 00 12"), true), (hex("01 00 04 00 0a"), true)], into: &r)
        #expect(out.count == 1 && out[0].1 == hex("0a"))
        #expect(r.dropped == 1)
    }

    @Test func oversizePDUIsSkippedToNextStart() {
        var r = L2CAPReassembler()
        // Announces 1000 bytes: beyond any ATT_MTU we accept.
        let out = push([(hex("e8 03 04 00") + [UInt8](repeating: 1, count: 23), true),
                        ([UInt8](repeating: 2, count: 27), false),
                        (hex("01 00 06 00 01"), true)], into: &r)
        #expect(out.count == 1 && out[0].0 == 6)
        #expect(r.dropped == 1)
    }
}
