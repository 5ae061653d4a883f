import Testing
@testable import BLEHost
import TestSupport

/// Flow control from a peer's request to the controller's credits
/// (HostFlowControl.swift): a legal peer never loses an answer, a peer that
/// pipelines is slowed, and nothing waiting for room is dropped.
@Suite struct FlowControlTests {
    static let readRequest = hex("0a 01 00")
    static let pairingRequest = hex("01 03 00 01 10 07 07")
    /// LE Credit Based Connection Request (Vol 3 Part A §4.22): PSM 0x80, CID 0x40, MTU/MPS 23, 5 credits.
    static let creditRequest = hex("14 05 0a 00 80 00 40 00 17 00 17 00 05 00")

    func peripheral(links: Int) -> ScriptedController<RecordingDelegate> {
        var c = ScriptedController(delegate: RecordingDelegate(), maxConnections: links)
        c.host.start(now: 0)
        c.answerAll()
        var data = AdvertisingData()
        data.addFlags(0x06)
        c.host.startAdvertising(data: data, scanResponse: AdvertisingData())
        c.answerAll()
        for i in 0..<links {
            c.connect(handle: 0x40 + UInt16(i))
            c.answerAll()
        }
        c.events.removeAll()
        return c
    }

    /// Plays the controller until nothing more goes out: every ACL packet is
    /// completed at once. Returns the (handle, channel, first payload byte) of
    /// each PDU sent (they fit one 27-byte fragment here).
    func sendEverything(_ c: inout ScriptedController<RecordingDelegate>) -> [(UInt16, UInt16, UInt8)] {
        var sent: [(UInt16, UInt16, UInt8)] = []
        for _ in 0..<200 {
            let packets = c.drain().filter { $0.first == H4PacketType.acl }
            if packets.isEmpty { break }
            for p in packets {
                let handle = UInt16(p[1]) | UInt16(p[2] & 0x0F) << 8
                #expect((p[2] >> 4) & 0x3 == 0, "one fragment per PDU in these tests")
                sent.append((handle, UInt16(p[7]) | UInt16(p[8]) << 8, p[9]))
                c.feed(event: [0x13, 5, 1, UInt8(handle & 0xFF), UInt8(handle >> 8), 1, 0])
            }
        }
        return sent
    }

    @Test func eightLegalCentralsWithSMPAndSignalingLoseNothing() {
        // 8 links x (ATT + SMP + signalling) = 24 answers for 16 slots, no credits back yet.
        var c = peripheral(links: 8)
        for i in 0..<8 {
            let handle = 0x40 + UInt16(i)
            c.l2cap(handle: handle, channel: 4, Self.readRequest)
            c.l2cap(handle: handle, channel: 6, Self.pairingRequest)
            c.l2cap(handle: handle, channel: 5, Self.creditRequest)
        }
        #expect(c.host.droppedOutput == 0)
        let sent = sendEverything(&c)
        for i in 0..<8 {
            let handle = 0x40 + UInt16(i)
            let mine = sent.filter { $0.0 == handle }
            #expect(Set(mine.map(\.1)) == [4, 5, 6] && mine.count == 3, "link \(handle): \(mine)")
            #expect(mine.contains { $0.1 == 4 && $0.2 == ATTOpcode.readResponse })
            #expect(mine.contains { $0.1 == 5 && $0.2 == L2CAPSignalCode.leCreditBasedConnectionResponse })
            #expect(mine.contains { $0.1 == 6 && $0.2 == SMP.pairingFailed })
        }
        #expect(c.host.droppedOutput == 0)
        #expect(!c.events.contains { if case .requestsDropped = $0 { true } else { false } })
    }

    @Test func aPipeliningCentralIsSlowedNeverTheOthers() {
        var c = peripheral(links: 4)
        // 0x40 sends 20 Read Requests without waiting; the others one each, after it.
        for _ in 0..<20 { c.l2cap(handle: 0x40, channel: 4, Self.readRequest) }
        for handle: UInt16 in [0x41, 0x42, 0x43] { c.l2cap(handle: handle, channel: 4, Self.readRequest) }
        // Its share (16 / 4 links) is queued, one more is owed, the rest dropped unserved.
        #expect(c.host.droppedOutput == 15)
        let lines = c.events.compactMap { if case .requestsDropped(0x40, .attPipelined, let n) = $0 { n } else { nil } }
        #expect(lines == [0], "the first drop is a line, the next 14 within a minute are counted")
        let sent = sendEverything(&c)
        #expect(sent.filter { $0.0 == 0x40 }.count == 5)
        for handle: UInt16 in [0x41, 0x42, 0x43] {
            #expect(sent.filter { $0.0 == handle }.map(\.2) == [ATTOpcode.readResponse])
        }
        // The held-back count is told when the link closes.
        c.events.removeAll()
        c.feed(event: hex("05 04 00 40 00 13"))
        let closing = c.events.compactMap { if case .requestsDropped(0x40, .attPipelined, let n) = $0 { n } else { nil } }
        #expect(closing == [13])
        #expect(HostEvent.requestsDropped(connection: 0x40, reason: .attPipelined, unreported: 0).severity == .warning)
    }

    @Test func aNotificationWaitsForRoomAndIsNotDropped() {
        var c = peripheral(links: 8)
        c.l2cap(handle: 0x40, channel: 4, hex("12 0d 00 01 00"))  // subscribe
        _ = sendEverything(&c)
        // Two reads fill 0x40's share (16 / 8); no credits come back.
        for _ in 0..<2 { c.l2cap(handle: 0x40, channel: 4, Self.readRequest) }
        let value = [UInt8](repeating: 0x42, count: 5)
        #expect(c.host.canSend(connection: 0x40) == false)
        #expect(value.withRaw { c.host.notify(connection: 0x40, attribute: 12, value: $0) } == false)
        #expect(c.host.droppedOutput == 0)
        #expect(!c.events.contains { if case .droppedOutput = $0 { true } else { false } })
        // Another link is not held up by it.
        #expect(c.host.canSend(connection: 0x41) == true)
        // Room again once the controller takes them.
        _ = sendEverything(&c)
        #expect(c.host.transmitRoomFreed == true)
        #expect(value.withRaw { c.host.notify(connection: 0x40, attribute: 12, value: $0) } == true)
        #expect(sendEverything(&c).map(\.2) == [ATTOpcode.handleValueNotification])
    }

    @Test func anOwedAnswerGoesBeforeLaterOnes() {
        var c = peripheral(links: 8)
        c.l2cap(handle: 0x40, channel: 4, hex("12 0d 00 01 00"))  // subscribe
        _ = sendEverything(&c)
        // Share of 2 taken by two reads, a third read is owed: a notification waits behind it.
        for _ in 0..<3 { c.l2cap(handle: 0x40, channel: 4, Self.readRequest) }
        #expect(!c.host.canSend(connection: 0x40) && !c.host.owed[0].isEmpty)
        let value = [UInt8](repeating: 0x42, count: 5)
        #expect(value.withRaw { c.host.notify(connection: 0x40, attribute: 12, value: $0) } == false)
        // The owed answer is queued as soon as a slot of the link frees, before anything new.
        #expect(sendEverything(&c).map(\.2) == [ATTOpcode.readResponse, ATTOpcode.readResponse, ATTOpcode.readResponse])
        #expect(value.withRaw { c.host.notify(connection: 0x40, attribute: 12, value: $0) } == true)
        #expect(sendEverything(&c).map(\.2) == [ATTOpcode.handleValueNotification])
        #expect(c.host.droppedOutput == 0)
    }

    @Test func aCommandIsServedEvenWithTheQueueFull() {
        var c = peripheral(links: 1)
        for _ in 0..<ACLTransmitQueue.capacity { c.l2cap(handle: 0x40, channel: 4, Self.readRequest) }
        // A Write Command has no answer: served (here refused, the value takes
        // no command), neither owed nor counted as a drop.
        c.l2cap(handle: 0x40, channel: 4, hex("52 0c 00 07"))
        #expect(c.host.droppedOutput == 0 && c.host.owed[0].isEmpty)
        #expect(!c.events.contains { if case .requestsDropped = $0 { true } else { false } })
    }
}

/// What a platform times an answer to its Number of Completed Packets with
/// (`Host.completionMark`, `completedFragments`): per link, in fragments.
@Suite struct CompletionMarkTests {
    @Test func fragmentsLeftCountAPartlySentHeadAndOnlyItsLink() {
        var queue = ACLTransmitQueue()
        let long = [UInt8](repeating: 0xAA, count: 60), short = [UInt8](repeating: 0xBB, count: 10)
        #expect(long.withUnsafeBytes { queue.enqueue(handle: 0x40, channel: 4, payload: $0) })
        #expect(short.withUnsafeBytes { queue.enqueue(handle: 0x41, channel: 4, payload: $0) })
        #expect(short.withUnsafeBytes { queue.enqueue(handle: 0x40, channel: 4, payload: $0) })
        // 4 + 60 bytes in 27-byte packets: 3; 4 + 10: 1.
        #expect(queue.fragments(handle: 0x40, maxLength: 27) == 4)
        #expect(queue.fragments(handle: 0x41, maxLength: 27) == 1)
        var packet = Capacity.HCIPacket()
        #expect(queue.nextFragment(maxLength: 27, into: &packet) == 0x40)
        #expect(queue.fragments(handle: 0x40, maxLength: 27) == 3, "37 bytes of the head are left: 2 packets")
        #expect(queue.fragments(handle: 0x42, maxLength: 27) == 0)
    }

    @Test func theMarkIsReachedWhenTheControllerCompletesThePacketsQueuedBeforeIt() {
        var c = ScriptedController(delegate: RecordingDelegate(), maxConnections: 1)
        c.host.start(now: 0)
        c.answerAll()
        c.connect(handle: 0x40)
        c.answerAll()
        _ = c.drain()
        #expect(c.host.completionMark(connection: 0x41) == nil)
        let before = c.host.completedFragments(connection: 0x40) ?? 99
        c.l2cap(handle: 0x40, channel: 4, hex("0a 01 00"))  // Read Request: its response is queued
        let mark = c.host.completionMark(connection: 0x40) ?? 0
        #expect(mark >= 1)
        let sent = c.drain().filter { $0.first == H4PacketType.acl }
        #expect(!sent.isEmpty)
        #expect(c.host.completionMark(connection: 0x40) == mark, "sent, not yet completed: the same mark")
        #expect((c.host.completedFragments(connection: 0x40) ?? 0) < mark)
        c.feed(event: [0x13, 5, 1, 0x40, 0x00, UInt8(sent.count), 0])
        #expect(c.host.completedFragments(connection: 0x40) == before + sent.count)
        #expect((c.host.completedFragments(connection: 0x40) ?? 0) >= mark)
    }
}
