import Testing
@testable import BLEHost
import TestSupport

/// A driver without set-up whose host reached ready at `now`.
func readyDriver(settings: HostLoopSettings = HostLoopSettings(), now: UInt64 = 0, _ o: inout RecordingObserver) -> TestDriver<NoSetup> {
    var d = makeDriver(NoSetup(), settings: settings)
    d.start(now: now)
    answerAll(&d, now: now, &o)
    return d
}

@Suite struct HostLoopTests {
    @Test func startWithoutSetupBeginsTheHostsBringUp() {
        var o = RecordingObserver()
        var d = makeDriver(NoSetup())
        d.start(now: 0)
        #expect(d.state == .running)
        // The host's first command is HCI_Reset, exactly as Vol 4 Part E §7.3.2 encodes it.
        #expect(drain(&d) == [hciReset])
        #expect(drain(&d).isEmpty, "one command at a time until it is answered")
        #expect(d.check(now: 0) == .running)
        // The command timeout (3 s) comes before the ready timeout (10 s).
        #expect(d.nextDeadline() == 3_000)
        deliver(&d, resetComplete, now: 5, &o)
        #expect(drain(&d).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 0x005F)), now: 6, &o)
        let rest = answerAll(&d, now: 10, &o)
        #expect(rest.contains(HCIOpcode.setEventMask))
        #expect(d.wasReady == true)
        #expect(o.events.contains("ready") && d.app.events.contains("ready"))
        #expect(o.events == d.app.events, "the board sees every event the application sees, in order")
        // Ready: the ready timeout no longer applies.
        #expect(d.check(now: 20_000) == .running)
        #expect(d.droppedPackets == 0 && d.framingResets == 0)
    }

    @Test func hostTimersRunWhenDueWhateverTheBoardWasTold() {
        var o = RecordingObserver()
        var d = readyDriver(now: 0, &o)
        // Nothing armed: the board may sleep until input.
        #expect(d.nextDeadline() == nil)
        d.host.probeController()
        #expect(drain(&d).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        // Armed after the board asked: its timeout (3 s) still runs in the next `service`.
        d.service(now: 10_000, observer: &o)
        #expect(o.events.contains("controllerTimeout"))
        // Asked again: the re-initialisation's Reset, due at its own timeout.
        #expect(drain(&d) == [hciReset])
        let due = d.nextDeadline()
        #expect(due == 13_000)
        d.service(now: 12_999, observer: &o)
        #expect(o.events.filter { $0 == "controllerTimeout" }.count == 1)
        d.service(now: 13_000, observer: &o)
        #expect(o.events.filter { $0 == "controllerTimeout" }.count == 2)
    }

    @Test func aPassWokenBeforeTheDeadlineTheBoardWaitedForLeavesTheHostsTimers() {
        var o = RecordingObserver()
        var d = readyDriver(now: 0, &o)
        d.host.probeController()
        #expect(drain(&d).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        // Asked after sending, as a board does: the command's timeout is in it.
        let due = d.nextDeadline() ?? UInt64.max
        #expect(due == 3_000)
        #expect(d.nextDeadline() == due, "asking again changes nothing")
        d.service(now: 2_999, waitedUntil: due, observer: &o)
        #expect(!o.events.contains("controllerTimeout"))
        d.service(now: 3_000, waitedUntil: due, observer: &o)
        #expect(o.events.filter { $0 == "controllerTimeout" }.count == 1)
        // The skip is real: told of a later deadline, a pass leaves the timers alone.
        #expect(drain(&d) == [hciReset])
        d.service(now: 6_000, waitedUntil: 6_001, observer: &o)
        #expect(o.events.filter { $0 == "controllerTimeout" }.count == 1)
        d.service(now: 6_000, observer: &o)
        #expect(o.events.filter { $0 == "controllerTimeout" }.count == 2, "unknown (the default): every timer checked")
    }

    @Test func notReadyAfterReadyTimeoutWithoutAnswers() {
        var o = RecordingObserver()
        var d = makeDriver(NoSetup())
        d.start(now: 0)
        #expect(d.check(now: 9_999) == .running)
        let (state, at, sent) = runSilent(&d, from: 0, limit: 60_000, &o)
        #expect(state == .finished(.notReady))
        #expect(at == 10_000)
        // The host re-initialised the silent controller at each command timeout.
        #expect(sent == [hciReset, hciReset, hciReset, hciReset])
        #expect(o.events == ["controllerTimeout", "controllerTimeout", "controllerTimeout"])
        #expect(d.wasReady == false)
        // An end is final.
        #expect(d.check(now: 20_000) == .finished(.notReady))
        #expect(d.nextOutgoing() == false)
    }

    @Test func askerEndsAtTheFirstUnansweredCommand() {
        // A controller that accepts and never answers: the asker ends
        // at the command timeout (3 s), not at its scan or answer deadline, as
        // "not ready" before bring-up finished and "silent" after.
        var settings = HostLoopSettings()
        settings.endsOnSilentController = true
        var o = RecordingObserver()
        var d = makeDriver(NoSetup(), settings: settings)
        d.start(now: 0)
        let (state, at, sent) = runSilent(&d, from: 0, limit: 60_000, &o)
        #expect(state == .finished(.notReady))
        #expect(at == 3_000)
        #expect(sent.first == hciReset)
        #expect(o.events == ["controllerTimeout"])

        settings.healthInterval = 1_000
        var o2 = RecordingObserver()
        var ready = readyDriver(settings: settings, &o2)
        ready.service(now: 1_000, observer: &o2)
        #expect(drain(&ready).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        ready.service(now: 4_000, observer: &o2)
        #expect(ready.check(now: 4_000) == .finished(.controllerSilent))
        #expect(ready.nextOutgoing() == false)
    }

    @Test func portResetWantedWhenTheFirstCommandTimesOut() {
        var settings = HostLoopSettings()
        settings.offersPortReset = true
        var o = RecordingObserver()
        var d = makeDriver(NoSetup(), settings: settings)
        d.start(now: 0)
        let (state, at, sent) = runSilent(&d, from: 0, limit: 60_000, &o)
        #expect(state == .finished(.portResetWanted))
        #expect(at == 3_000)
        #expect(sent.first == hciReset)
        #expect(o.events == ["controllerTimeout"])

        // Not after the host was ready once: a health probe that times out
        // re-initialises the controller instead.
        settings.healthInterval = 1_000
        var o2 = RecordingObserver()
        var ready = readyDriver(settings: settings, &o2)
        #expect(ready.wasReady == true)
        ready.service(now: 1_000, observer: &o2)
        #expect(drain(&ready).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        ready.service(now: 4_000, observer: &o2)
        #expect(o2.events.last == "controllerTimeout")
        #expect(ready.check(now: 4_000) == .running)
        #expect(drain(&ready) == [hciReset])
    }

    /// The recovery ladder's settings of the Linux 8-Ball on USB, probing every second.
    static func ladderSettings(portReset: Bool = true, startingRung: RecoveryRung? = nil) -> HostLoopSettings {
        var settings = HostLoopSettings()
        settings.climbsRecoveryLadder = true
        settings.offersPortResetRung = portReset
        settings.startingRung = startingRung
        settings.healthInterval = 1_000
        return settings
    }

    @Test func aSilentControllerClimbsTheLadderOneRungPerUnansweredCommand() {
        var o = RecordingObserver()
        var d = readyDriver(settings: HostLoopTests.ladderSettings(), &o)
        #expect(d.recoveryRung == nil)
        // Rung 1: the probe goes unanswered; the host resets the controller itself.
        d.service(now: 1_000, observer: &o)
        #expect(drain(&d).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        d.service(now: 4_000, observer: &o)
        #expect(d.recoveryRung == .hciReset)
        #expect(d.check(now: 4_000) == .running)
        #expect(drain(&d) == [hciReset])
        // Rung 2: the reset goes unanswered too: the board is asked for a port
        // reset and a fresh bring-up, and the host no longer resets by itself.
        d.service(now: 7_000, observer: &o)
        #expect(d.recoveryRung == .portReset)
        #expect(d.check(now: 7_000) == .finished(.portResetWanted))
        #expect(drain(&d).isEmpty)
        #expect(o.events.filter { $0 == "controllerTimeout" }.count == 2)
        #expect(d.host.recoveries == 1, "one HCI Reset rung, counted once")

        // Rung 3: the session opened after the port reset starts on rung 2; its
        // bring-up left unanswered ends it at the command timeout, not the ready timeout.
        var o2 = RecordingObserver()
        var fresh = makeDriver(NoSetup(), settings: HostLoopTests.ladderSettings(startingRung: .portReset))
        fresh.start(now: 0)
        let (state, at, sent) = runSilent(&fresh, from: 0, limit: 60_000, &o2)
        #expect(state == .finished(.notReady))
        #expect(at == 3_000)
        #expect(sent == [hciReset], "no HCI Reset of its own after the port reset's")
        #expect(fresh.recoveryRung == .exit && fresh.host.recoveries == 0)
    }

    @Test func aBringUpThatFinishesLeavesTheLadder() {
        // The port reset brought it back: off the ladder, and a later wedge starts at rung 1 again.
        var o = RecordingObserver()
        var d = makeDriver(NoSetup(), settings: HostLoopTests.ladderSettings(startingRung: .portReset))
        d.start(now: 0)
        answerAll(&d, now: 10, &o)
        #expect(d.wasReady && d.recoveryRung == nil)
        d.service(now: 1_000, observer: &o)
        #expect(drain(&d).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        d.service(now: 4_000, observer: &o)
        #expect(d.recoveryRung == .hciReset && d.check(now: 4_000) == .running)
        // The HCI Reset rung works: bring-up finishes, the ladder is left.
        answerAll(&d, now: 4_100, &o)
        #expect(d.recoveryRung == nil)
        #expect(o.events.filter { $0 == "ready" }.count == 2)
        d.service(now: 5_100, observer: &o)
        #expect(drain(&d).compactMap(opcodeOf) == [HCIOpcode.readLocalVersion])
        d.service(now: 8_100, observer: &o)
        #expect(d.recoveryRung == .hciReset && d.check(now: 8_100) == .running)
        #expect(drain(&d) == [hciReset])
    }

    @Test func withoutAPortTheLadderGoesFromTheResetToTheEnd() {
        // TCP or a UART: no port to reset, so rung 1 is followed by the last.
        var o = RecordingObserver()
        var d = readyDriver(settings: HostLoopTests.ladderSettings(portReset: false), &o)
        d.service(now: 1_000, observer: &o)
        _ = drain(&d)
        d.service(now: 4_000, observer: &o)
        #expect(drain(&d) == [hciReset])
        d.service(now: 7_000, observer: &o)
        #expect(d.recoveryRung == .exit)
        #expect(d.check(now: 7_000) == .finished(.controllerSilent))
    }

    @Test func withoutTheLadderTheHostResetsForEverAndBringUpKeepsItsTimeouts() {
        // Firmware's driver (no ladder): a silent controller is reset at every timeout.
        var settings = HostLoopSettings()
        settings.healthInterval = 1_000
        var o = RecordingObserver()
        var d = readyDriver(settings: settings, &o)
        var now: UInt64 = 1_000
        for _ in 0..<3 {
            d.service(now: now, observer: &o)
            _ = drain(&d)
            now += 3_000
        }
        #expect(d.recoveryRung == nil && d.check(now: now) == .running)
        // The ladder starts only after a bring-up: one that never finishes keeps
        // the warm-start port reset and the ready timeout (notReadyAfterReadyTimeoutWithoutAnswers).
        var o2 = RecordingObserver()
        var laddered = makeDriver(NoSetup(), settings: HostLoopTests.ladderSettings())
        laddered.start(now: 0)
        let (state, at, _) = runSilent(&laddered, from: 0, limit: 60_000, &o2)
        #expect(state == .finished(.notReady) && at == 10_000)
    }

    @Test func lastAnswerMovesOnlyWhenACommandIsAnswered() {
        var o = RecordingObserver()
        var d = readyDriver(settings: HostLoopTests.ladderSettings(), now: 50, &o)
        #expect(d.lastAnswer == 50)
        d.service(now: 1_050, observer: &o)
        _ = drain(&d)
        // Other events (an advertising report, a disconnection) are not answers.
        deliver(&d, hex("05 04 00 40 00 13"), now: 1_060, &o)
        #expect(d.lastAnswer == 50 && d.lastInput == 1_060)
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 0x005F)), now: 1_070, &o)
        #expect(d.lastAnswer == 1_070)
    }

    @Test func malformedPacketsAreDroppedBeforeTheHost() {
        var o = RecordingObserver()
        var d = readyDriver(&o)
        let seenBefore = o.received.count, hostClock = d.host.now
        let hostDropped = d.host.droppedInput
        let bad: [(UInt8, [UInt8])] = [
            (H4PacketType.event, []),
            (H4PacketType.event, hex("0e")),
            (H4PacketType.event, hex("0e 05 01 03 0c 00")),  // length byte 5, 4 bytes follow
            (H4PacketType.event, hex("0e 03 01 03 0c 00")),  // length byte 3, 4 bytes follow
            (H4PacketType.acl, hex("40 20")),
            (H4PacketType.acl, hex("40 20 05 00 01 00 04 00")),  // length 5, 4 bytes follow
            (H4PacketType.acl, hex("40 20 03 00 01 00 04 00")),  // length 3, 4 bytes follow
            (H4PacketType.acl, hex("40 20 04 01 01 00 04 00")),  // length 0x104: the high byte counts
            (H4PacketType.command, hex("03 0c 00")),  // a command from the controller
            (H4PacketType.sco, hex("40 00 01 aa")),
            (H4PacketType.iso, hex("40 00 01 00 aa")),
            (0xFF, resetComplete),
        ]
        for (type, packet) in bad { deliver(&d, type: type, packet, now: 50, &o) }
        #expect(d.droppedPackets == bad.count)
        // The host never saw them (it takes its clock from each packet it handles).
        #expect(hostClock < 50)
        #expect(d.host.now == hostClock)
        #expect(o.received.count == seenBefore)
        #expect(d.host.droppedInput == hostDropped)
        // A whole packet still goes through, to the board and the host.
        let packet = hex("13 05 01 40 00 01 00")
        deliver(&d, packet, now: 60, &o)
        #expect(d.host.now == 60)
        #expect(o.received.last == [H4PacketType.event] + packet)
        #expect(d.droppedPackets == bad.count)
        #expect(d.lastInput == 60)
    }

    // An event, a longer event and an ACL packet as a UART carries them (Vol 4 Part A §2).
    static let h4Packets = [
        hex("04") + resetComplete,
        hex("04 0e 0c 01 01 10 00 0c 00 00 0c 5f 00 10 22"),
        hex("02 40 20 07 00 03 00 04 00 0a 03 00"),
    ]

    @Test func streamSplitAtEveryByteBoundaryYieldsTheSamePackets() {
        let whole = Self.h4Packets.flatMap { $0 }
        // What the host made of them: its clock (from each packet it handles) and its drops.
        func run(_ reads: [[UInt8]]) -> ([[UInt8]], [Int], Int, Int) {
            var o = RecordingObserver()
            var d = makeDriver(NoSetup())
            d.start(now: 0)
            _ = drain(&d)
            for read in reads { stream(&d, read, now: 1, &o) }
            return (o.received, [Int(d.host.now), d.host.droppedInput], d.droppedPackets, d.framingResets)
        }
        let reference = run([whole])
        #expect(reference.0 == Self.h4Packets)
        #expect(reference.1[0] == 1, "the host handled them")
        #expect(reference.2 == 0 && reference.3 == 0)
        for split in 0...whole.count {
            let result = run([Array(whole[..<split]), Array(whole[split...])])
            #expect(result.0 == Self.h4Packets && result.1 == reference.1, "split at \(split)")
            #expect(result.2 == 0 && result.3 == 0, "split at \(split)")
        }
        for a in 1..<whole.count {
            for b in a..<whole.count {
                let result = run([Array(whole[..<a]), Array(whole[a..<b]), Array(whole[b...])])
                #expect(result.0 == Self.h4Packets, "split at \(a), \(b)")
            }
        }
        let byByte = run(whole.map { [$0] })
        #expect(byByte.0 == Self.h4Packets && byByte.1 == reference.1)
    }

    @Test func bytesThatAreNotHCILoseTheFraming() {
        var o = RecordingObserver()
        var d = readyDriver(now: 0, &o)
        let seen = o.received.count
        stream(&d, hex("ff fe fd"), now: 100, &o)
        #expect(o.losses == [.notHCI(3)])
        #expect(d.framingResets == 1)
        #expect(o.received.count == seen)
        // The host re-initialises the controller.
        #expect(drain(&d) == [hciReset])
        #expect(d.check(now: 100) == .running)
        deliver(&d, resetComplete, now: 105, &o)
        let opcodes = [HCIOpcode.reset] + answerAll(&d, now: 110, &o)
        #expect(opcodes.count > 5)
        #expect(d.host.isReady == true)

        // Garbage before a packet in the same read: the rest of the read is not trusted.
        stream(&d, hex("00") + hex("04") + resetComplete, now: 200, &o)
        #expect(o.losses == [.notHCI(3), .notHCI(1)])
        #expect(d.framingResets == 2)
        #expect(o.received.count == seen + opcodes.count)
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 205, &o)

        // A length no controller sends (ACL of 2000 bytes) is lost framing too.
        answerAll(&d, now: 210, &o)
        stream(&d, hex("02 40 20 d0 07 00 00"), now: 300, &o)
        #expect(o.losses == [.notHCI(3), .notHCI(1), .notHCI(1)])
        #expect(d.framingResets == 3)
        #expect(drain(&d) == [hciReset])
    }

    @Test func packetBegunAndNotFinishedStalls() {
        var o = RecordingObserver()
        var d = readyDriver(now: 0, &o)
        #expect(d.nextDeadline() == nil)
        stream(&d, hex("04 0e 04 01"), now: 5_000, &o)
        #expect(d.nextDeadline() == 6_000)
        d.service(now: 5_999, observer: &o)
        #expect(o.losses.isEmpty && d.framingResets == 0)
        #expect(drain(&d).isEmpty)
        d.service(now: 6_000, observer: &o)
        #expect(o.losses == [.stalled])
        #expect(d.framingResets == 1)
        #expect(drain(&d) == [hciReset])
        #expect(d.check(now: 6_000) == .running)
        // A fresh de-framer: the next whole packet is read as it is.
        stream(&d, hex("04") + resetComplete, now: 6_010, &o)
        #expect(o.received.last == hex("04") + resetComplete)
        #expect(o.losses == [.stalled])

        // A packet finished within the limit does not stall, whatever the gaps before.
        var o2 = RecordingObserver()
        var e = readyDriver(now: 0, &o2)
        stream(&e, hex("04 13 05"), now: 1_000, &o2)
        stream(&e, hex("01 40 00 01 00"), now: 1_999, &o2)
        e.service(now: 2_999, observer: &o2)
        #expect(o2.losses.isEmpty && e.framingResets == 0)
        #expect(o2.received.last == hex("04 13 05 01 40 00 01 00"))
    }

    @Test func stopEndsWhenTheShutdownResetIsAnswered() {
        var o = RecordingObserver()
        var d = readyDriver(&o)
        d.stop(now: 100)
        #expect(d.isStopping == true)
        #expect(d.check(now: 100) == .running)
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 150, &o)
        #expect(d.check(now: 150) == .finished(.stopped))
        #expect(o.events.last == "shutdownComplete")
        #expect(d.app.events.last == "shutdownComplete")
        d.stop(now: 200)  // a second stop changes nothing
        #expect(d.check(now: 200) == .finished(.stopped))
    }

    @Test func stopTimesOutAfterStopGrace() {
        var o = RecordingObserver()
        var d = readyDriver(&o)
        d.stop(now: 100)
        #expect(drain(&d) == [hciReset])
        #expect(d.nextDeadline() == 1_000)
        d.service(now: 999, observer: &o)
        #expect(d.check(now: 999) == .running)
        d.service(now: 1_000, observer: &o)
        #expect(d.check(now: 1_000) == .finished(.stopTimedOut))
    }

    @Test func stopBeforeReady() {
        // The host is not ready: nothing to tidy, it stops at once.
        var d = makeDriver(NoSetup())
        d.start(now: 0)
        _ = drain(&d)
        d.stop(now: 10)
        #expect(d.check(now: 10) == .finished(.stopped))
    }

    @Test func finishedApplicationStopsTheHost() {
        var o = RecordingObserver()
        var d = readyDriver(&o)
        #expect(d.check(now: 100) == .running && !d.isStopping)
        d.app.finished = true
        #expect(d.check(now: 200) == .running)
        #expect(d.isStopping == true)
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 250, &o)
        #expect(d.check(now: 250) == .finished(.stopped))
        #expect(d.app.events.last == "shutdownComplete")
    }
}

/// An application that always has something to send and something to say:
/// each poll tries a notification (the queue is full) and pushes an event,
/// as the 8-Ball's poll did when a full queue made it report a drop.
struct TirelessApp: HostApplication {
    var polls = 0
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {}
    mutating func poll(host: inout Host, now: UInt64) {
        polls += 1
        var byte: UInt8 = 7
        _ = withUnsafeBytes(of: &byte) { host.notify(connection: 0x40, attribute: 12, value: $0) }
        host.push(.dataBufferOverflow)
    }
    var isWaitingForRoom: Bool { true }
}

@Suite struct DriverBoundTests {
    @Test func aPassIsBoundedWithTheQueueFullAndATirelessApplication() {
        var o = RecordingObserver()
        var configuration = HostConfiguration(role: .peripheral)
        configuration.staticAddress = BDAddress.staticRandom(from: 0x1122_3344_5566)
        var d = HostLoop(host: Host(configuration: configuration, database: testDatabase()), app: TirelessApp(), setup: NoSetup())
        d.start(now: 0)
        answerAll(&d, now: 0, &o)
        deliver(&d, hex("3e 13 01 00 40 00 01 01 01 02 03 04 05 c6 18 00 00 00 90 01 00"), now: 1, &o)
        _ = drain(&d)
        // Subscribe, then fill the link's share with Read Requests; no credits come back.
        let subscribe = hex("40 20 09 00 05 00 04 00 12 0d 00 01 00")
        deliver(&d, type: H4PacketType.acl, subscribe, now: 2, &o)
        for _ in 0..<(ACLTransmitQueue.capacity + 4) {
            deliver(&d, type: H4PacketType.acl, hex("40 20 07 00 03 00 04 00 0a 01 00"), now: 3, &o)
        }
        _ = drain(&d)
        d.app.polls = 0
        // The pass returns: a few polls, then back to the board with the rest due at once.
        d.service(now: 4, observer: &o)
        #expect(d.app.polls <= HostLoop<TirelessApp, NoSetup>.pollRounds)
        #expect(d.nextDeadline() == 0, "work left: the board comes back at once, after its signals and I/O")
        // Every later pass is bounded too, and nothing waiting for room was dropped.
        for t in 5..<105 {
            d.app.polls = 0
            d.service(now: UInt64(t), observer: &o)
            #expect(d.app.polls >= 1 && d.app.polls <= HostLoop<TirelessApp, NoSetup>.pollRounds)
        }
        #expect(d.check(now: 200) == .running)
        d.stop(now: 200)
        #expect(d.isStopping == true)
    }
}
