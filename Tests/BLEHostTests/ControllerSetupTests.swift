import Testing
@testable import BLEHost
import TestSupport

/// A set-up as a vendor driver would be: one vendor command, then the board's
/// file, then one command carrying the file's first byte, then done. An empty
/// file fails it. The vendors' own set-ups are tested in ChipsetsTests.
struct ScriptedSetup: ControllerSetup {
    static let ask: UInt16 = 0xFC01, load: UInt16 = 0xFC02
    var next: UInt16 = 0
    var byte: UInt8 = 0
    var handled = 0

    mutating func begin() -> SetupStep {
        next = Self.ask
        return .send
    }
    mutating func handle(event: UnsafeRawBufferPointer) -> SetupStep {
        handled += 1
        // Command Complete (Core Vol 4 Part E §7.7.14): the opcode is at bytes 3 and 4.
        guard event.count >= 5, event[0] == HCIEventCode.commandComplete else { return .wait }
        switch UInt16(event[3]) | UInt16(event[4]) << 8 {
        case Self.ask: return .needFiles
        case Self.load: return .done
        default: return .wait
        }
    }
    mutating func provide(firmware: UnsafeRawBufferPointer, companion: UnsafeRawBufferPointer) -> SetupStep {
        guard let first = firmware.first else { return .failed }
        byte = first
        next = Self.load
        return .send
    }
    mutating func command(into packet: inout Capacity.HCIPacket) {
        packet.removeAll()
        if next == Self.load {
            hex("01 02 fc 01").withRaw { _ = packet.append($0) }
            _ = packet.append(byte)
        } else {
            hex("01 01 fc 00").withRaw { _ = packet.append($0) }
        }
    }
    var answerTimeout: UInt64 { 7_000 }
}

@Suite struct ControllerSetupTests {
    @Test func theSetUpRunsBeforeTheHostsBringUp() {
        var o = RecordingObserver()
        var d = makeDriver(ScriptedSetup())
        d.start(now: 0)
        #expect(d.state == .settingUp)
        #expect(drain(&d) == [hex("01 01 fc 00")])
        #expect(drain(&d).isEmpty, "one command at a time until it is answered")
        deliver(&d, commandComplete(ScriptedSetup.ask), now: 10, &o)
        // Waiting for the board's files has no deadline.
        #expect(d.check(now: 10) == .needsFiles)
        #expect(d.nextDeadline() == nil)
        #expect(d.check(now: 100_000) == .needsFiles)
        hex("a5 5a").withRaw { firmware in
            d.provideFiles(firmware: firmware, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 100_000)
        }
        #expect(d.state == .settingUp)
        #expect(drain(&d) == [hex("01 02 fc 01 a5")])
        // The set-up's own answer timeout, from the files.
        #expect(d.nextDeadline() == 107_000)
        deliver(&d, commandComplete(ScriptedSetup.load), now: 100_010, &o)
        #expect(d.state == .running)
        #expect(d.setup.handled == 2)
        // The set-up's events went to the board and the set-up (an application
        // has no packet path: the host takes them once running).
        #expect(o.received.count == 2)
        // Then the host's own bring-up, from its HCI Reset.
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 100_020, &o)
        answerAll(&d, now: 100_030, &o)
        #expect(d.wasReady == true)
    }

    @Test func aFailedSetUpEndsTheDriver() {
        var o = RecordingObserver()
        var d = makeDriver(ScriptedSetup())
        d.start(now: 0)
        _ = drain(&d)
        deliver(&d, commandComplete(ScriptedSetup.ask), now: 10, &o)
        d.provideFiles(firmware: UnsafeRawBufferPointer(start: nil, count: 0),
                       companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 20)
        #expect(d.check(now: 20) == .finished(.setupFailed))
        #expect(d.nextOutgoing() == false)
    }

    @Test func aSilentSetUpEndsTheDriverOrAsksForAPortReset() {
        var o = RecordingObserver()
        var d = makeDriver(ScriptedSetup())
        d.start(now: 0)
        let (state, at, sent) = runSilent(&d, from: 0, limit: 60_000, &o)
        #expect(state == .finished(.setupSilent))
        #expect(at == 3_000, "the first answer is timed by the driver's first-answer timeout")
        #expect(sent == [hex("01 01 fc 00")])

        var settings = HostLoopSettings()
        settings.offersPortReset = true
        var p = makeDriver(ScriptedSetup(), settings: settings)
        p.start(now: 0)
        #expect(runSilent(&p, from: 0, limit: 60_000, &o).0 == .finished(.portResetWanted))

        // Answered once, then silent: the set-up's own timeout, and no port reset.
        var q = makeDriver(ScriptedSetup(), settings: settings)
        q.start(now: 0)
        _ = drain(&q)
        deliver(&q, commandComplete(0x0C03), now: 100, &o)
        #expect(q.nextDeadline() == 7_100)
        #expect(q.check(now: 7_099) == .settingUp)
        #expect(q.check(now: 7_100) == .finished(.setupSilent))
    }

    @Test func stopDuringTheSetUpAbandonsIt() {
        var d = makeDriver(ScriptedSetup())
        d.start(now: 0)
        _ = drain(&d)
        d.stop(now: 10)
        #expect(d.check(now: 10) == .finished(.stopped))
        #expect(d.nextOutgoing() == false)
    }
}
