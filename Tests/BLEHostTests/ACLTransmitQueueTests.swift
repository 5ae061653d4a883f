import Testing
@testable import BLEHost
import TestSupport

@Suite struct ACLTransmitQueueTests {
    func drain(_ q: inout ACLTransmitQueue, max: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var packet = Capacity.HCIPacket()
        while q.nextFragment(maxLength: max, into: &packet) != nil { out.append(packet.bytes) }
        return out
    }

    @Test func theBasicHeaderIsWrittenInFrontOfTheFirstFragment() {
        var q = ACLTransmitQueue()
        let slot = q.reserve(handle: 0x40, channel: 4)!
        q.pdus[slot].append(0x1B)
        q.pdus[slot].appendUInt16(0x000E)
        for b in "SLUG-ANSWER-07".utf8 { q.pdus[slot].append(b) }
        q.commit()
        let out = drain(&q, max: 10)
        // 4 + 17 bytes in fragments of 10: start (PB 00), then continuations (PB 01).
        #expect(out.count == 3)
        #expect(Array(out[0].prefix(9)) == hex("02 40 00 0a 00 11 00 04 00"))
        #expect(out[1][2] == 0x10 && out[2][2] == 0x10)
        let payload = out.flatMap { $0[5...] }
        #expect(Array(payload) == hex("11 00 04 00 1b 0e 00") + Array("SLUG-ANSWER-07".utf8))
    }

    @Test func removingALinkKeepsTheOthersInOrderInPlace() {
        var q = ACLTransmitQueue()
        for (handle, byte) in [(0x40, 1), (0x41, 2), (0x40, 3), (0x41, 4)] as [(UInt16, UInt8)] {
            [byte].withRaw { _ = q.enqueue(handle: handle, channel: 4, payload: $0) }
        }
        q.remove(handle: 0x40)
        #expect(q.count == 2)
        let out = drain(&q, max: 27)
        #expect(out.map { $0[9] } == [2, 4])
    }

    @Test func aFullQueueRefuses() {
        var q = ACLTransmitQueue()
        var accepted = 0
        for _ in 0...ACLTransmitQueue.capacity {
            if [1].withRaw({ q.enqueue(handle: 1, channel: 4, payload: $0) }) { accepted += 1 }
        }
        #expect(accepted == ACLTransmitQueue.capacity)
        let slot = q.reserve(handle: 1, channel: 4)
        #expect(slot == nil)
    }
}
