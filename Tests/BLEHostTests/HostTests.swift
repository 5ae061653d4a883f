import Testing
@testable import BLEHost
import TestSupport

@Suite struct HostBringUpTests {
    @Test func sequenceWithRandomAddressWhenPublicIsZero() {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        // The first packet is HCI_Reset, exactly as Vol 4 Part E §7.3.2 encodes it.
        #expect(c.drain() == [hex("01 03 0c 00")])
        c.complete(HCIOpcode.reset)
        let opcodes = c.answerAll()
        #expect(Array(opcodes.prefix(10)) == [
            HCIOpcode.readLocalVersion, HCIOpcode.readBDAddr, HCIOpcode.readLocalCommands,
            HCIOpcode.readLocalFeatures, HCIOpcode.setEventMask, HCIOpcode.leSetEventMask,
            HCIOpcode.leReadBufferSize, HCIOpcode.leReadLocalFeatures, HCIOpcode.leSetRandomAddress,
        ] + [])
        #expect(c.events.contains { if case .ready = $0 { true } else { false } })
        let info = c.host.controller
        #expect(info.address == BDAddress.staticRandom(from: 0x1122_3344_5566))
        #expect(info.aclDataLength == 27 && info.aclPackets == 4 && info.leBuffers)
        #expect(info.manufacturer == 0x005F && info.hciVersion == 0x0C)
        // LE Set Random Address carries the static address, little-endian, top bits 11.
        let setRandom = c.sent.first { ScriptedController<RecordingDelegate>.opcode($0) == HCIOpcode.leSetRandomAddress }!
        #expect(setRandom[4...].last! & 0xC0 == 0xC0)
        #expect(c.host.isReady == true)
    }

    @Test func publicAddressIsUsedWhenPresent() {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        let opcodes = c.answerAll(publicAddress: hex("66 55 44 33 22 11"))
        #expect(!opcodes.contains(HCIOpcode.leSetRandomAddress))
        #expect(c.host.controller.address == BDAddress(value: 0x1122_3344_5566, type: 0))
    }

    @Test func fallsBackToSharedBuffersWhenLEBufferIsZero() {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        let opcodes = c.answerAll(leBuffer: [0, 0, 0])
        #expect(opcodes.contains(HCIOpcode.readBufferSize))
        #expect(c.host.controller.aclDataLength == 251 && c.host.controller.aclPackets == 8 && !c.host.controller.leBuffers)
    }

    @Test func commandCreditsGateCommands() {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        _ = c.drain()
        // No answer yet: nothing more goes out.
        #expect(c.drain().isEmpty)
        // A Command Complete with zero credits: the next command waits.
        c.complete(HCIOpcode.reset, credits: 0)
        #expect(c.drain().isEmpty)
        // A NOP Command Complete (opcode 0) gives a credit back (Vol 4 Part E §7.7.14).
        c.feed(event: hex("0e 03 01 00 00"))
        #expect(c.drain().compactMap(ScriptedController<RecordingDelegate>.opcode) == [HCIOpcode.readLocalVersion])
    }

    @Test func silentControllerIsReinitialised() {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        _ = c.drain()
        c.host.tick(now: 2_999)
        #expect(c.drain().isEmpty)
        c.host.tick(now: 3_000)
        #expect(c.drain() == [hex("01 03 0c 00")])
        #expect(c.events.contains { if case .controllerTimeout(HCIOpcode.reset, true) = $0 { true } else { false } })
        #expect(c.host.recoveries == 1)
        // By kind, for the metrics: this one a timeout, no other.
        #expect((0..<RecoveryKind.count).map { c.host.counts.recoveries[$0] } == [1, 0, 0])
        #expect(c.host.nextDeadline() == 6_000)
    }

    @Test func malformedEventsAreDropped() {
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        c.answerAll()
        #expect(c.host.droppedInput == 0)
        c.events.removeAll()
        for event in [hex("0e"), hex("0e 05 01"), hex("0e 01 01"), hex("13 01 02"), hex("3e 02 01"),
                      hex("3e 01 0d"), hex("05 02 00 40"), hex("0f 01 00")] {
            c.feed(event: event)
        }
        // Each of the eight is dropped once, as a malformed HCI event, and nothing else happens.
        #expect(c.host.droppedInput == 8)
        #expect(c.host.counts.droppedInput[InputDrop.hciEvent.index] == 8)
        #expect(c.host.droppedOutput == 0)
        #expect(c.events.count == 8)
        #expect(c.events.allSatisfy { if case .droppedInput(.hciEvent) = $0 { true } else { false } })
        #expect(c.host.isReady == true)
    }
}

@Suite struct HostConnectionTests {
    /// A ready host, advertising, with the controller's ACL buffers as given.
    func readyPeripheral(buffers: [UInt8] = [27, 0, 4], maxConnections: Int = 4) -> ScriptedController<RecordingDelegate> {
        var c = ScriptedController(delegate: RecordingDelegate(), maxConnections: maxConnections)
        c.host.start(now: 0)
        c.answerAll(leBuffer: buffers)
        var data = AdvertisingData()
        data.addFlags(0x06)
        c.host.startAdvertising(data: data, scanResponse: AdvertisingData())
        c.answerAll()
        return c
    }

    @Test func advertisingCommands() {
        let c = readyPeripheral()
        let opcodes = c.sent.compactMap(ScriptedController<RecordingDelegate>.opcode)
        let tail = Array(opcodes.suffix(4))
        #expect(tail == [HCIOpcode.leSetAdvertisingParameters, HCIOpcode.leSetAdvertisingData,
                         HCIOpcode.leSetScanResponseData, HCIOpcode.leSetAdvertiseEnable])
        let parameters = c.sent.first { ScriptedController<RecordingDelegate>.opcode($0) == HCIOpcode.leSetAdvertisingParameters }!
        // Interval 160..240 (100–150 ms), ADV_IND, own address random, all channels.
        #expect(Array(parameters[4...]) == hex("a0 00 f0 00 00 01 00 00 00 00 00 00 00 07 00"))
        let data = c.sent.first { ScriptedController<RecordingDelegate>.opcode($0) == HCIOpcode.leSetAdvertisingData }!
        #expect(data.count == 4 + 32 && data[4] == 3 && Array(data[5..<8]) == hex("02 01 06"))
        #expect(c.events.contains { if case .advertising(true) = $0 { true } else { false } })
    }

    @Test func attResponseIsFragmentedAndGatedByCredits() {
        var c = readyPeripheral(buffers: [27, 0, 2])
        c.connect(handle: 0x40)
        _ = c.answerAll()  // advertising is re-enabled below the limit
        // Read By Group Type over an MTU of 247 gives a response larger than 27 bytes.
        c.l2cap(handle: 0x40, channel: 4, hex("02 f7 00"))
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("10 01 00 ff ff 00 28"))
        var packets = c.drain()
        // 2 credits: the MTU response and the first fragment only.
        #expect(packets.count == 1)
        c.feed(event: hex("13 05 01 40 00 02 00"))
        packets += c.drain()
        c.feed(event: hex("13 05 01 40 00 02 00"))
        packets += c.drain()
        let pdus = ScriptedController<RecordingDelegate>.l2capPDUs(c.sent)
        #expect(pdus.count == 2 && pdus[1].0 == 4 && pdus[1].1.first == 0x11)
        // Every fragment fits the controller's 27-byte buffers; continuations use PB 0b01.
        let acl = c.sent.filter { $0.first == 0x02 }
        #expect(acl.allSatisfy { $0.count - 5 <= 27 })
        #expect(acl.dropFirst(2).allSatisfy { $0[2] & 0x30 == 0x10 })
    }

    /// At ATT_MTU 517 (Android's, and ours on Linux) a 512-byte value is one
    /// Write Request: it arrives in ACL fragments of the controller's length
    /// (27 bytes, or 251 with the Data Length Extension), is gathered and
    /// served; a Prepare Write of 512 bytes is echoed whole (517 bytes), sent
    /// in fragments of that length as credits come back.
    @Test(arguments: [27, 251])
    func theLargestMTUInAndOutInFragments(length: Int) {
        typealias C = ScriptedController<RecordingDelegate>
        var c = readyPeripheral(buffers: [UInt8(length), 0, 4])
        c.connect(handle: 0x40)
        _ = c.answerAll()
        c.l2cap(handle: 0x40, channel: 4, hex("02 05 02"))
        #expect(C.l2capPDUs(c.drain()).last?.1 == hex("03 05 02"))
        #expect(c.host.mtu(connection: 0x40) == 517)
        func fragments(_ att: [UInt8]) -> [[UInt8]] {
            let l2cap = Array(C.aclPacket(handle: 0x40, channel: 4, att)[4...])
            return stride(from: 0, to: l2cap.count, by: length).map { offset in
                let part = Array(l2cap[offset..<min(offset + length, l2cap.count)])
                return [0x40, offset == 0 ? 0x20 : 0x10, UInt8(part.count & 0xFF), UInt8(part.count >> 8)] + part
            }
        }
        // Out: whatever the host sends, one credit back per fragment, until it stops.
        func drainAll(_ c: inout C) -> [[UInt8]] {
            var out: [[UInt8]] = []
            while true {
                let packets = c.drain().filter { $0.first == 0x02 }
                if packets.isEmpty { return out }
                out += packets
                c.feed(event: [0x13, 5, 1, 0x40, 0x00, UInt8(packets.count), 0])
            }
        }
        let value = [UInt8](repeating: 0x61, count: 511) + [0x3F]
        let write = fragments([0x12, 0x0C, 0x00] + value)
        #expect(write.count == (4 + 515 + length - 1) / length)
        for fragment in write { c.feed(acl: fragment) }
        #expect(c.delegate.writes.last?.1 == value)
        #expect(C.l2capPDUs(drainAll(&c)).map(\.1) == [hex("13")])
        let prepare = [0x16, 0x0C, 0x00, 0x00, 0x00] + value
        for fragment in fragments(prepare) { c.feed(acl: fragment) }
        let echo = drainAll(&c)
        #expect(echo.count == (4 + 517 + length - 1) / length && echo.allSatisfy { $0.count - 5 <= length })
        #expect(C.l2capPDUs(echo).map(\.1) == [[0x17] + Array(prepare[1...])])
        for fragment in fragments(hex("18 01")) { c.feed(acl: fragment) }
        #expect(C.l2capPDUs(drainAll(&c)).map(\.1) == [hex("19")])
        #expect(c.delegate.writes.count == 2 && c.delegate.writes.last?.1 == value)
        #expect(c.host.droppedInput == 0 && c.host.droppedOutput == 0)
    }

    @Test func aclForUnknownHandleOrBadLengthIsDropped() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        #expect(c.host.droppedInput == 0)
        c.events.removeAll()
        c.feed(acl: hex("41 20 05 00 01 00 04 00 0a"))  // unknown handle
        c.feed(acl: hex("40 20 09 00 01 00 04 00 0a"))  // length field too long
        c.feed(acl: hex("40 30 05 00 01 00 04 00 0a"))  // reserved PB 0b11
        c.feed(acl: hex("40 10 02 00 0a 00"))  // continuation without start
        c.l2cap(handle: 0x40, channel: 0x0040, hex("01"))  // unknown channel
        c.l2cap(handle: 0x40, channel: 4, hex("1b 0c"))  // a notification without its handle
        // The unknown handle's packet is held (it may be early); the other five are dropped.
        #expect(c.host.droppedInput == 5)
        #expect(c.events.compactMap { event -> InputDrop? in
            if case .droppedInput(let why) = event { return why } else { return nil }
        } == [.aclMalformed, .aclMalformed, .aclMalformed, .l2capUnknownChannel, .attMalformed])
        #expect(ScriptedController<RecordingDelegate>.l2capPDUs(c.drain()).isEmpty)
        // Another link appears: the held packet was not early but wrong.
        c.events.removeAll()
        c.connect(handle: 0x42)
        #expect(c.host.droppedInput == 6)
        #expect(c.events.contains { if case .droppedInput(.aclUnknownHandle) = $0 { true } else { false } })
        #expect(c.host.droppedOutput == 0)
    }

    @Test func aFullCommandRingDropsAndSaysSoOnceAMinute() {
        var c = readyPeripheral()
        c.events.removeAll()
        // Commands nobody sends: the ring takes its capacity, the next are lost;
        // the first loss is a line, the next within a minute only counted.
        let ring = Capacity.CommandRing(filler: Capacity.HCIPacket()).maxCount
        for _ in 0..<(ring + 2) { c.host.queueCommand(Capacity.HCIPacket.command(HCIOpcode.readLocalVersion)) }
        c.takeEvents()
        #expect(c.host.droppedOutput == 2)
        #expect(c.events.compactMap { event -> OutputDrop? in
            if case .droppedOutput(let why, 0) = event { return why } else { return nil }
        } == [.commandQueueFull])
        #expect(HostEvent.droppedOutput(.commandQueueFull, unreported: 0).severity == .warning)
    }

    @Test func aclOvertakingItsConnectionCompleteIsReplayed() {
        // Over USB, events and ACL use different endpoints: the first ATT request
        // of a link can arrive before the LE Connection Complete that announces it.
        var c = readyPeripheral()
        c.l2cap(handle: 0x40, channel: 4, hex("02 f7 00"))
        #expect(ScriptedController<RecordingDelegate>.l2capPDUs(c.drain()).isEmpty)
        c.connect(handle: 0x40)
        let pdus = ScriptedController<RecordingDelegate>.l2capPDUs(c.drain())
        #expect(pdus.count == 1 && pdus[0].1 == hex("03 05 02"))
    }

    @Test func signalingAndSMPAreAnswered() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        c.l2cap(handle: 0x40, channel: 5, hex("06 07 04 00 40 00 40 00"))
        c.l2cap(handle: 0x40, channel: 6, hex("01 03 00 01 10 07 07"))
        let pdus = ScriptedController<RecordingDelegate>.l2capPDUs(c.drain())
        #expect(pdus.map(\.0) == [5, 6])
        #expect(pdus[0].1 == hex("01 07 02 00 00 00") && pdus[1].1 == hex("05 05"))
        #expect(c.events.contains { if case .pairingRefused(0x40, 0) = $0 { true } else { false } })
    }

    @Test func repeatedSMPIsReportedOncePerMinutePerLink() {
        // A hostile central sends SMP over and over (2,143 in five minutes seen):
        // the first refusal is reported, then one line a minute with the count
        // between, and the rest at the disconnection. Every packet is still answered.
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        func refusals(_ c: inout ScriptedController<RecordingDelegate>) -> [Int] {
            c.events.compactMap { if case .pairingRefused(0x40, let n) = $0 { n } else { nil } }
        }
        var answered = 0
        for second in 0..<300 {
            c.now = UInt64(second) * 1_000
            for _ in 0..<7 {
                c.l2cap(handle: 0x40, channel: 6, hex("01 03 00 01 10 07 07"))
                answered += ScriptedController<RecordingDelegate>.l2capPDUs(c.drain()).count
                c.feed(event: [0x13, 5, 1, 0x40, 0x00, 1, 0])  // Number Of Completed Packets
            }
        }
        #expect(answered == 2_100)
        // t = 0 s, 60 s, 120 s, 180 s, 240 s: five lines; each after the first counts the 419 in between.
        #expect(refusals(&c) == [0, 419, 419, 419, 419])
        c.now = 300_000
        c.feed(event: [0x05, 4, 0, 0x40, 0x00, 0x13])  // Disconnection Complete
        #expect(refusals(&c) == [0, 419, 419, 419, 419, 418])
        // A new link starts afresh.
        c.connect(handle: 0x40)
        c.l2cap(handle: 0x40, channel: 6, hex("01 03 00 01 10 07 07"))
        _ = c.drain()
        #expect(refusals(&c).last == 0 && refusals(&c).count == 7)
    }

    @Test func idleClockCountsAskingNotAnyRequest() {
        // Four centrals that each send one harmless request (a read, an Exchange
        // MTU, discovery) every 59 s must not hold every slot: only an accepted
        // write (subscribe, question) restarts the idle clock (60 s by default).
        var c = readyPeripheral()
        let handles: [UInt16] = [0x40, 0x41, 0x42, 0x43]
        for handle in handles { c.connect(handle: handle) }
        _ = c.answerAll()
        let harmless = [hex("0a 03 00"), hex("02 f7 00"), hex("10 01 00 ff ff 00 28"), hex("08 01 00 ff ff 03 28")]
        for round in 1...3 {
            c.now = UInt64(round) * 59_000
            c.host.tick(now: c.now)
            for (i, handle) in handles.enumerated() { c.l2cap(handle: handle, channel: 4, harmless[(i + round) % 4]) }
            _ = c.drain()
        }
        let idle = c.events.compactMap { if case .idleDisconnect(let handle, _) = $0 { handle } else { nil } }
        #expect(Set(idle) == Set(handles), "every slot is freed after 60 s without a write")
        #expect(c.now >= 60_000 && c.now < 180_000)

        // A central that subscribes or asks keeps its link.
        var k = readyPeripheral()
        k.connect(handle: 0x40)
        _ = k.answerAll()
        for round in 1...5 {
            k.now = UInt64(round) * 59_000
            k.host.tick(now: k.now)
            k.l2cap(handle: 0x40, channel: 4, round % 2 == 0 ? hex("12 0d 00 01 00") : hex("12 0c 00 41 3f"))
            _ = k.drain()
        }
        #expect(!k.events.contains { if case .idleDisconnect = $0 { true } else { false } })
        // A refused write is not asking: 60 s after the last accepted one, the link is closed.
        k.now = 5 * 59_000 + 30_000
        k.l2cap(handle: 0x40, channel: 4, hex("12 03 00 41"))  // Device Name: not writable
        k.now = 5 * 59_000 + 60_000
        k.host.tick(now: k.now)
        _ = k.drain()
        #expect(k.events.contains { if case .idleDisconnect(0x40, _) = $0 { true } else { false } })
    }

    @Test func attMTUIsSetOncePerConnection() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        var responses: [[UInt8]] = []
        for mtu in UInt8(100)...105 {
            c.l2cap(handle: 0x40, channel: 4, [0x02, mtu, 0x00])
            responses += ScriptedController<RecordingDelegate>.l2capPDUs(c.drain()).map(\.1)
            c.feed(event: [0x13, 5, 1, 0x40, 0x00, 1, 0])  // Number Of Completed Packets
        }
        // Every request is answered with our Rx MTU; only the first sets the MTU.
        #expect(responses == Array(repeating: hex("03 05 02"), count: 6))
        #expect(c.host.mtu(connection: 0x40) == 100)
        let exchanged = c.events.compactMap { if case .mtuExchanged(0x40, let mtu) = $0 { mtu } else { nil } }
        #expect(exchanged == [100])
        // A new connection exchanges afresh.
        c.feed(event: [0x05, 4, 0, 0x40, 0x00, 0x13])
        c.connect(handle: 0x40)
        c.l2cap(handle: 0x40, channel: 4, hex("02 40 00"))
        _ = c.drain()
        #expect(c.host.mtu(connection: 0x40) == 64)
    }

    @Test func longTermKeyRequestGetsNegativeReply() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        c.feed(event: hex("3e 0d 05 40 00 00 00 00 00 00 00 00 00 00 00"))
        let out = c.drain()
        #expect(out == [hex("01 1b 20 02 40 00")])
    }

    @Test func advertisingStopsAtLimitAndResumesAfterDisconnection() {
        var c = readyPeripheral(maxConnections: 1)
        c.connect(handle: 0x40)
        let afterConnect = c.answerAll()
        #expect(!afterConnect.contains(HCIOpcode.leSetAdvertiseEnable))
        #expect(c.events.contains { if case .advertising(false) = $0 { true } else { false } })
        // A second connection beyond the limit is refused with "low resources".
        c.connect(handle: 0x41)
        #expect(c.drain() == [hex("01 06 04 03 41 00 14")])
        c.status(HCIOpcode.disconnect)
        c.feed(event: hex("05 04 00 40 00 13"))
        let afterDisconnect = c.drain()
        #expect(afterDisconnect == [hex("01 0a 20 01 01")])
        #expect(c.events.contains { if case .disconnected(0x40, 0x13) = $0 { true } else { false } })
    }

    @Test func controllerThatCannotAdvertiseWhileConnectedWaits() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        let out = c.drain()
        #expect(out == [hex("01 0a 20 01 01")])
        c.complete(HCIOpcode.leSetAdvertiseEnable, status: 0x0C)
        // Then the link's tuning (LinkTuning.swift), and no second try at advertising.
        #expect(c.drain().compactMap(ScriptedController<RecordingDelegate>.opcode) == [HCIOpcode.leReadRemoteFeatures])
        c.status(HCIOpcode.leReadRemoteFeatures)
        #expect(c.events.contains { if case .advertisingWhileConnectedUnsupported = $0 { true } else { false } })
        c.feed(event: hex("05 04 00 40 00 13"))
        #expect(c.drain() == [hex("01 0a 20 01 01")])
    }

    @Test func hardwareErrorReinitialisesAndDropsLinks() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        c.feed(event: hex("10 01 07"))
        #expect(c.events.contains { if case .hardwareError(7, true) = $0 { true } else { false } })
        #expect(c.events.contains { if case .disconnected(0x40, _) = $0 { true } else { false } })
        #expect(c.host.connectionCount == 0 && !c.host.isReady)
        let opcodes = c.answerAll()
        #expect(opcodes.first == HCIOpcode.reset)
        // Advertising resumes once the controller is back.
        #expect(opcodes.suffix(1) == [HCIOpcode.leSetAdvertiseEnable])
        #expect(c.host.recoveries == 1)
        #expect(c.host.counts.recoveries[RecoveryKind.hardwareError.rawValue] == 1 && c.host.counts.connections == 1)
    }

    @Test func notificationsNeedSubscriptionAndFitMTU() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        let value = [UInt8](repeating: 0x42, count: 40)
        #expect(value.withRaw { c.host.notify(connection: 0x40, attribute: 12, value: $0) } == false)
        c.l2cap(handle: 0x40, channel: 4, hex("12 0d 00 01 00"))
        _ = c.drain()
        #expect(value.withRaw { c.host.notify(connection: 0x40, attribute: 12, value: $0) } == true)
        c.feed(event: hex("13 05 01 40 00 04 00"))
        let pdus = ScriptedController<RecordingDelegate>.l2capPDUs(c.drain())
        #expect(pdus.last!.1 == [0x1B, 0x0C, 0x00] + Array(value.prefix(20)))
        // Indications are not enabled for it.
        #expect(value.withRaw { c.host.indicate(connection: 0x40, attribute: 12, value: $0) } == false)
    }

    @Test func shutdownSequence() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        c.host.shutdown(now: 10)
        let out = c.drain()
        #expect(out == [hex("01 0a 20 01 00")])
        c.complete(HCIOpcode.leSetAdvertiseEnable)
        #expect(c.drain() == [hex("01 06 04 03 40 00 13")])
        c.status(HCIOpcode.disconnect)
        c.feed(event: hex("05 04 00 40 00 16"))
        #expect(c.drain() == [hex("01 03 0c 00")])
        c.complete(HCIOpcode.reset)
        #expect(c.host.isStopped == true)
        #expect(c.events.contains { if case .shutdownComplete(controllerReset: true) = $0 { true } else { false } })
    }

    @Test func aStopBeforeBringUpSaysNoResetWasConfirmed() {
        // A controller that never answered was not reset: the line must not say it was.
        var c = ScriptedController(delegate: RecordingDelegate())
        c.host.start(now: 0)
        _ = c.drain()
        c.host.shutdown(now: 10)
        _ = c.drain()
        #expect(c.host.isStopped == true)
        #expect(c.events.contains { if case .shutdownComplete(controllerReset: false) = $0 { true } else { false } })
        var line = TextLine()
        HostEvent.shutdownComplete(controllerReset: false).describe(into: &line, host: c.host)
        #expect(line.text == "stopped (no controller reset confirmed)")
    }

    @Test func shutdownResetsAnywayWhenDisconnectionNeverCompletes() {
        var c = readyPeripheral()
        c.connect(handle: 0x40)
        _ = c.answerAll()
        c.host.shutdown(now: 10)
        _ = c.answerAll()
        c.host.tick(now: 10 + 1_000)
        #expect(c.drain().compactMap(ScriptedController<RecordingDelegate>.opcode) == [HCIOpcode.reset])
    }
}

/// A log line as text (the methods a board's sink must have; the rest are the defaults).
struct TextLine: LogSink {
    var text = ""
    mutating func terminated(_ start: UnsafePointer<UInt8>) { text += String(cString: start) }
    mutating func decimal(_ value: Int) { text += String(value) }
    mutating func hex(_ value: UInt16) { text += "0x" + String(value, radix: 16) }
    mutating func byte(_ value: UInt8) { text += String(value, radix: 16, uppercase: true) }
    mutating func address(_ address: BDAddress) { text += String(address.value, radix: 16) }
    mutating func statusName(_ status: UInt8) { text += String(status) }
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
        #expect(c.host.nextDeadline() == 60_000)
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
        #expect(c.host.nextDeadline() == nil)
    }

    @Test func resynchronizingResetsTheControllerAndDropsTheLinks() {
        var c = connected(idle: 0)
        c.host.resynchronize(now: 5)
        #expect(c.drain().first == hex("01 03 0c 00"))
        #expect(c.events.contains { if case .disconnected(0x40, _) = $0 { true } else { false } })
        #expect(c.host.connectionCount == 0)
    }
}
