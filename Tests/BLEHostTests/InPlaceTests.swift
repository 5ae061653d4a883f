import Testing
@testable import BLEHost
import TestSupport

/// The in-place paths of issue 8: packets cut where they lie, PDUs handed on
/// without copies, responses built in their transmit slot, links reset in place.
@Suite struct InPlaceDeframingTests {
    /// Cuts `reads` as the run loop does; returns (type, bytes, in place?) per packet.
    func cut(_ reads: [[UInt8]], _ deframer: inout H4Deframer) -> [(UInt8, [UInt8], Bool)] {
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

@Suite struct InPlaceReassemblyTests {
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
        let pdu = [UInt8(0x04), 0x01, 0x04, 0x00] + [UInt8](repeating: 0x12, count: 260)
        pdu.withRaw { #expect(r.push($0, isStart: true) == .needMore) }
        #expect(r.dropped == 1)
    }
}

@Suite struct TransmitQueueTests {
    func drain(_ q: inout ACLTransmitQueue, max: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var packet = HCIPacket()
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

@Suite struct IdleLinkTests {
    func connected(idle: UInt64) -> ScriptedController<RecordingDelegate> {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.configuration.idleTimeout = idle
        c.host.start(now: 0)
        c.answerAll()
        c.connect(handle: 0x40)
        c.answerAll()
        return c
    }

    func disconnects(_ c: borrowing ScriptedController<RecordingDelegate>) -> [[UInt8]] {
        c.sent.filter { ScriptedController<RecordingDelegate>.opcode($0) == HCIOpcode.disconnect }
    }

    @Test func aCentralThatNeverAsksIsDisconnectedAfterTheTimeout() {
        var c = connected(idle: 60_000)
        #expect({ c.host.nextDeadline() }() == 60_000)
        c.host.tick(now: 59_999)
        _ = c.drain()
        #expect(disconnects(c).isEmpty)
        c.host.tick(now: 60_000)
        _ = c.drain()
        #expect(disconnects(c) == [hex("01 06 04 03 40 00 13")])
        #expect(c.events.contains { if case .idleDisconnect(0x40, _) = $0 { true } else { false } })
    }

    @Test func anAcceptedWriteRestartsTheClockAReadDoesNot() {
        var c = connected(idle: 1_000)
        c.now = 500
        c.l2cap(handle: 0x40, channel: 4, hex("0a 03 00"))  // Read Request: not asking
        c.now = 900
        c.l2cap(handle: 0x40, channel: 4, hex("12 0d 00 01 00"))  // subscribe: asking
        c.host.tick(now: 1_500)
        _ = c.drain()
        #expect(disconnects(c).isEmpty)
        c.host.tick(now: 1_900)
        _ = c.drain()
        #expect(disconnects(c).count == 1)
    }

    @Test func zeroMeansNever() {
        var c = connected(idle: 0)
        c.host.tick(now: 10_000_000)
        _ = c.drain()
        #expect(disconnects(c).isEmpty)
        #expect({ c.host.nextDeadline() }() == nil)
    }

    @Test func resynchronizingResetsTheControllerAndDropsTheLinks() {
        var c = connected(idle: 0)
        c.host.resynchronize(now: 5)
        #expect(c.drain().first == hex("01 03 0c 00"))
        #expect(c.events.contains { if case .disconnected(0x40, _) = $0 { true } else { false } })
        #expect({ c.host.connectionCount }() == 0)
    }
}

/// The event ring: events in order, its last slot kept for the notice that
/// events were lost, counted as dropped output.
@Suite struct EventQueueTests {
    @Test func fixedQueueKeepsOrderRoundTheRing() {
        var queue = FixedQueue<3, Int>(filler: 0)
        #expect(queue.pop() == nil)
        for round in 1...4 {  // head walks round the ring
            #expect(queue.push(round * 10 + 1) && queue.push(round * 10 + 2))
            #expect(queue.pop() == round * 10 + 1)
            #expect(queue.pop() == round * 10 + 2)
            #expect(queue.pop() == nil)
        }
        #expect(queue.push(1) && queue.push(2) && queue.push(3) && !queue.push(4))
        #expect(queue.pop() == 1 && queue.count == 2)
    }

    @Test func hostEventsAreSmall() {
        #expect(MemoryLayout<HostEvent>.size <= 32)
        #expect(MemoryLayout<HostEvent>.stride <= 32)
    }

    @Test func hostEventsAreTakenUntilNoneIsLeft() {
        var c = IdleLinkTests().connected(idle: 0)
        c.host.resynchronize(now: 5)  // drops the link: a Disconnected event waits
        let first = c.host.nextEvent()
        #expect({ if case .disconnected(0x40, _) = first { true } else { false } }())
        while c.host.nextEvent() != nil {}
        #expect(c.host.nextEvent() == nil && !c.host.hasEvents)
    }

    @Test func anOverflowIsReportedOnceInTheReservedSlotAndCounted() {
        var c = ScriptedController(delegate: RecordingDelegate())
        let capacity = Capacity.EventRing(filler: .ready).maxCount
        // Unknown L2CAP channel: each packet is one dropped input and one event.
        for _ in 0..<(capacity + 3) { c.host.handlePacketKeepingEvents(hex("40 00 05 00")) }
        #expect({ c.host.droppedInput }() == capacity + 3)
        #expect({ c.host.droppedOutput }() == 4)  // the events that did not fit
        var taken: [HostEvent] = []
        while let event = c.host.nextEvent() { taken.append(event) }
        #expect(taken.count == capacity)
        #expect(taken.dropLast().allSatisfy { if case .droppedInput(.aclMalformed) = $0 { true } else { false } })
        #expect({ if case .droppedOutput(.eventQueueFull) = taken.last { true } else { false } }())
        // Taken: the next overflow is reported again.
        for _ in 0..<capacity { c.host.handlePacketKeepingEvents(hex("40 00 05 00")) }
        taken.removeAll()
        while let event = c.host.nextEvent() { taken.append(event) }
        #expect({ if case .droppedOutput(.eventQueueFull) = taken.last { true } else { false } }())
        #expect({ c.host.droppedOutput }() == 5)
    }
}

extension Host {
    /// One ACL packet, its events left in the ring.
    mutating func handlePacketKeepingEvents(_ packet: [UInt8]) {
        var none = NoGATTDelegate()
        packet.withRaw { handlePacket(type: H4PacketType.acl, $0, now: 0, delegate: &none) }
    }
}

@Suite struct InPlaceConstructionTests {
    /// The same script against a host: bring-up, a central, discovery, a
    /// subscription, a write, a notification, a disconnection.
    func script(_ c: inout ScriptedController<RecordingDelegate>) -> [[UInt8]] {
        c.host.start(now: 0)
        c.answerAll()
        c.connect(handle: 0x40)
        c.answerAll()
        for pdu in ["02 f7 00", "10 01 00 ff ff 00 28", "08 01 00 ff ff 03 28", "12 0d 00 01 00", "12 0c 00 41 3f", "0a 0c 00"] {
            c.l2cap(handle: 0x40, channel: 4, hex(pdu))
            c.feed(event: hex("13 05 01 40 00 01 00"))
            _ = c.drain()
        }
        [UInt8(7)].withRaw { _ = c.host.notify(connection: 0x40, attribute: 0x0C, value: $0) }
        _ = c.drain()
        c.feed(event: hex("05 04 00 40 00 13"))
        c.answerAll()
        return c.sent
    }

    @Test func aHostBuiltInPlaceOverGarbageBehavesLikeOneFromInit() {
        var fromInit = ScriptedController(delegate: RecordingDelegate())
        var inPlace = ScriptedController(delegate: RecordingDelegate())
        let memory = UnsafeMutablePointer<Host>.allocate(capacity: 1)
        UnsafeMutableRawPointer(memory).initializeMemory(as: UInt8.self, repeating: 0xA5, count: MemoryLayout<Host>.size)
        Host.initialize(memory, configuration: inPlace.host.configuration)
        memory.pointee.buildDatabase { $0 = testDatabase() }
        swap(&inPlace.host, &memory.pointee)
        memory.deinitialize(count: 1)
        memory.deallocate()
        let expected = script(&fromInit)
        let got = script(&inPlace)
        #expect(expected.filter { $0.first == 0x02 }.count >= 7, "every request answered, and the notification")
        #expect(got == expected)
        #expect(inPlace.events.count == fromInit.events.count)
    }
}
