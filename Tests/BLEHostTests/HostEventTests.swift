import Testing
@testable import BLEHost
import TestSupport

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
        #expect(c.host.counts.connections == 1)
        c.host.resynchronize(now: 5)  // drops the link: a Disconnected event waits
        #expect(c.host.counts.recoveries[RecoveryKind.framingLoss.rawValue] == 1 && c.host.recoveries == 1)
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
        #expect(c.host.droppedInput == capacity + 3)
        #expect(c.host.droppedOutput == 4)  // the events that did not fit
        // By reason, for the metrics: each set sums to its total.
        #expect(c.host.counts.droppedInput[InputDrop.aclMalformed.index] == UInt32(capacity + 3))
        #expect(c.host.counts.droppedOutput[OutputDrop.eventQueueFull.index] == 4)
        var taken: [HostEvent] = []
        while let event = c.host.nextEvent() { taken.append(event) }
        #expect(taken.count == capacity)
        #expect(taken.dropLast().allSatisfy { if case .droppedInput(.aclMalformed) = $0 { true } else { false } })
        #expect({ if case .droppedOutput(.eventQueueFull, _) = taken.last { true } else { false } }())
        // Taken: the next overflow is reported again.
        for _ in 0..<capacity { c.host.handlePacketKeepingEvents(hex("40 00 05 00")) }
        taken.removeAll()
        while let event = c.host.nextEvent() { taken.append(event) }
        #expect({ if case .droppedOutput(.eventQueueFull, _) = taken.last { true } else { false } }())
        #expect(c.host.droppedOutput == 5)
    }
}

extension Host {
    /// One ACL packet, its events left in the ring.
    mutating func handlePacketKeepingEvents(_ packet: [UInt8]) {
        var none = NoGATTDelegate()
        packet.withRaw { handlePacket(type: H4PacketType.acl, $0, now: 0, delegate: &none) }
    }
}
