import Testing
@testable import BLEHost
import TestSupport

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

/// A PDU that arrives whole is handed on where it lies; fragments are gathered.
@Suite struct L2CAPReassemblerInPlaceTests {
    @Test func aWholePDUInOneFragmentIsNotCopied() {
        var r = L2CAPReassembler()
        hex("03 00 04 00 0a 03 00").withRaw { raw in
            #expect(r.push(raw, isStart: true) == .completeInPlace(channel: 4))
        }
    }

    @Test func fragmentsCompleteInTheBuffer() {
        var r = L2CAPReassembler()
        hex("05 00 04 00 12").withRaw { #expect(r.push($0, isStart: true) == .needMore) }
        hex("0c 00 41 3f").withRaw { #expect(r.push($0, isStart: false) == .completeInBuffer(channel: 4)) }
        #expect(r.withPayload { Array($0) } == hex("12 0c 00 41 3f"))
    }

    @Test func aWholePDUTooLargeToKeepIsDropped() {
        var r = L2CAPReassembler()
        let length = L2CAPReassembler.capacity - 4 + 1  // one byte past ATT_MTU + header room
        let pdu = [UInt8(length & 0xFF), UInt8(length >> 8), 0x04, 0x00] + [UInt8](repeating: 0x12, count: length)
        pdu.withRaw { #expect(r.push($0, isStart: true) == .needMore) }
        #expect(r.dropped == 1)
    }
}

/// The largest ATT PDU (ATT_MTU 517 on Linux: a Prepare Write of a 512-byte
/// value; a 512-byte Write Request is 515) is gathered from the ACL fragments
/// a controller delivers: 27 bytes without the Data Length Extension, 251 with it.
@Suite struct L2CAPReassemblerLargestPDUTests {
    /// An L2CAP PDU carrying a Prepare Write Request of `valueLength` bytes.
    static func prepareWrite(_ valueLength: Int) -> [UInt8] {
        let att = [UInt8(0x16), 0x0C, 0x00, 0x00, 0x00] + (0..<valueLength).map { UInt8(truncatingIfNeeded: $0) }
        return [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
    }

    @Test(arguments: [27, 251])
    func aPDUOfTheLargestMTUIsGathered(fragment: Int) {
        let pdu = Self.prepareWrite(512)
        #expect(pdu.count == 4 + Int(ATT.maxMTU))
        var r = L2CAPReassembler()
        var results: [L2CAPReassembly] = []
        var offset = 0
        while offset < pdu.count {
            let part = Array(pdu[offset..<min(offset + fragment, pdu.count)])
            part.withRaw { results.append(r.push($0, isStart: offset == 0)) }
            offset += part.count
        }
        #expect(results.dropLast().allSatisfy { $0 == .needMore })
        #expect(results.last == .completeInBuffer(channel: 4))
        #expect(r.withPayload { Array($0) } == Array(pdu[4...]))
        #expect(r.dropped == 0)
    }

    @Test func aPDUOneBytePastTheMTUIsDropped() {
        // One byte more than the buffer holds (4 + ATT_MTU).
        let pdu = Self.prepareWrite(L2CAPReassembler.capacity - 4 - 5 + 1)
        #expect(pdu.count == L2CAPReassembler.capacity + 1)
        var r = L2CAPReassembler()
        var offset = 0
        while offset < pdu.count {
            let part = Array(pdu[offset..<min(offset + 27, pdu.count)])
            part.withRaw { #expect(r.push($0, isStart: offset == 0) == .needMore) }
            offset += part.count
        }
        #expect(r.dropped == 1)
        // The next PDU is gathered as usual.
        hex("03 00 04 00 0a 03 00").withRaw { #expect(r.push($0, isStart: true) == .completeInPlace(channel: 4)) }
    }
}
