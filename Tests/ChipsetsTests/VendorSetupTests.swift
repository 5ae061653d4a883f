import Testing
import BLEHost
@testable import Chipsets
import TestSupport

// `VendorSetup` run by the core's `HostLoop` as the controller's first init
// step, the way the Linux board runs it: the Realtek probe, its hand-over to
// the Intel loader, the files, the timeouts, a stop during the set-up.

/// The driver of the Linux board for a UART or virtual controller (`--firmware-dir` given).
func probeDriver(settings: HostLoopSettings = HostLoopSettings()) -> TestDriver<VendorSetup> {
    makeDriver(VendorSetup(plan: .probe(only: nil)), settings: settings)
}

/// A probing driver whose controller answered Reset (at 10 ms), then Read Local
/// Version Information with `version` (at 20 ms); `context` for a UART's.
func probedDriver(_ version: [UInt8], _ o: inout RecordingObserver, context: ChipsetContext? = nil) -> TestDriver<VendorSetup> {
    var d = context.map { makeDriver(VendorSetup(plan: .probe(only: nil), context: $0)) } ?? probeDriver()
    d.start(now: 0)
    _ = drain(&d)
    deliver(&d, resetComplete, now: 10, &o)
    _ = drain(&d)
    deliver(&d, commandComplete(HCIOpcode.readLocalVersion, version), now: 20, &o)
    return d
}

let readLocalVersion = hex("01 01 10 00")

@Suite struct VendorSetupTests {
    @Test func probeOfANonRealtekControllerEndsTheSetUpAndStartsTheHost() {
        var o = RecordingObserver()
        var d = probeDriver()
        d.start(now: 0)
        #expect(d.state == .settingUp)
        #expect(drain(&d) == [hciReset])
        #expect(drain(&d).isEmpty, "one command at a time")
        deliver(&d, resetComplete, now: 10, &o)
        #expect(d.check(now: 10) == .settingUp)
        #expect(drain(&d) == [readLocalVersion])
        // Broadcom (0x000F), an unknown subversion: nothing to load.
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 0x000F)), now: 20, &o)
        #expect(d.state == .running)
        #expect(d.check(now: 20) == .running)
        // The set-up's two answers went to the board and the set-up (an
        // application has no packet path: the host takes them once running).
        #expect(o.received.count == 2)
        // The host's own bring-up begins with its own Reset.
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 30, &o)
        let opcodes = answerAll(&d, now: 40, &o)
        #expect(opcodes.first == HCIOpcode.readLocalVersion)
        #expect(d.wasReady == true)
        #expect(d.setup.active == nil && d.setup.version?.manufacturer == 0x000F, "no chipset took it")
        #expect(d.setup.table.realtek.error == nil && d.setup.table.intel.error == nil)
        #expect(d.check(now: 40_000) == .running)
    }

    @Test func probeOfAnIntelControllerHandsOverToTheIntelLoader() {
        var o = RecordingObserver()
        // Intel's company identifier is 2: the Intel loader asks Intel Read Version (0xFC05, parameter 0xFF).
        var d = probedDriver(localVersion(manufacturer: 0x0002), &o)
        #expect(d.state == .settingUp)
        #expect(d.setup.active == 1, "the table's Intel entry took over")
        #expect(drain(&d) == [hex("01 05 fc 01 ff")])
        // Not over USB: commands and events stay on the usual endpoints.
        #expect(!d.setup.commandOnBulk && !d.setup.eventsOnBulk)
        // The Intel loader's answer timeout (5 s), counted from the last answer.
        #expect(d.nextDeadline() == 5_020)
        #expect(d.check(now: 5_019) == .settingUp)
        #expect(d.check(now: 5_020) == .finished(.setupSilent))
    }

    @Test func anIntelDongleOverUSBStartsAtResetAndUsesTheBulkEndpoints() {
        var o = RecordingObserver()
        var context = ChipsetContext()
        (context.overUSB, context.usbVendor, context.usbProduct) = (true, 0x8087, 0x0032)
        let plan = VendorSetup.plan(for: &context, probe: false)
        #expect(plan == .fromReset(1), "the table's Intel entry, from HCI Reset")
        var d = makeDriver(VendorSetup(plan: plan, context: context))
        d.start(now: 0)
        #expect(d.setup.active == 1)
        #expect(drain(&d) == [hciReset])
        // Until the download is done the boot loader answers on bulk IN.
        #expect(d.setup.eventsOnBulk && !d.setup.commandOnBulk)
        deliver(&d, resetComplete, now: 10, &o)
        #expect(drain(&d) == [hex("01 05 fc 01 ff")])
        #expect(d.nextDeadline() == 5_010)
    }

    @Test func refusedFilesFailTheSetUp() {
        var o = RecordingObserver()
        // RTL8822B needs a config file; none is given.
        var d = probedDriver(localVersion(manufacturer: 0x005D, hciVersion: 0x07, revision: 0x0B, subversion: 0x8822), &o)
        #expect(d.state == .needsFiles)
        #expect(d.setup.table.realtek.loader.chip == .rtl8822b)
        RealtekTests.file.withRaw { firmware in
            d.provideFiles(firmware: firmware, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 30)
        }
        #expect(d.check(now: 30) == .finished(.setupFailed))
        #expect(d.setup.table.realtek.error == .configMissing && d.setup.table.intel.error == nil)
        #expect(d.nextOutgoing() == false)
    }

    @Test func silentSetUp() {
        var o = RecordingObserver()
        var d = probeDriver()
        d.start(now: 0)
        // The first answer may take the driver's first-answer timeout (3 s).
        #expect(d.nextDeadline() == 3_000)
        let (state, at, sent) = runSilent(&d, limit: 60_000, &o)
        #expect(state == .finished(.setupSilent))
        #expect(at == 3_000)
        #expect(sent == [hciReset])

        // A USB dongle opened without a port reset that never answered: the board retries with one.
        var settings = HostLoopSettings()
        settings.offersPortReset = true
        var p = probeDriver(settings: settings)
        p.start(now: 0)
        let (portReset, portResetAt, _) = runSilent(&p, limit: 60_000, &o)
        #expect(portReset == .finished(.portResetWanted))
        #expect(portResetAt == 3_000)

        // Answered once, then silent for the Realtek probe's answer timeout (10 s):
        // no port reset, the controller went silent during the set-up.
        var q = probeDriver(settings: settings)
        q.start(now: 0)
        _ = drain(&q)
        deliver(&q, resetComplete, now: 100, &o)
        #expect(q.nextDeadline() == 10_100)
        #expect(q.check(now: 10_099) == .settingUp)
        #expect(q.check(now: 10_100) == .finished(.setupSilent))
    }

    @Test func stopDuringTheSetUpAbandonsIt() {
        var d = probeDriver()
        d.start(now: 0)
        #expect(drain(&d) == [hciReset])
        d.stop(now: 10)
        #expect(d.check(now: 10) == .finished(.stopped))
        #expect(d.nextOutgoing() == false)
    }

    @Test func realtekROMNeedsFilesThenDownloadsAndStartsTheHost() {
        var o = RecordingObserver()
        // RTL8761B: HCI version 0x0A, revision 0x000B, Realtek (0x005D), subversion 0x8761.
        var d = probedDriver(localVersion(manufacturer: 0x005D, hciVersion: 0x0A, revision: 0x0B, subversion: 0x8761), &o)
        #expect(d.state == .needsFiles)
        #expect(d.setup.table.realtek.loader.chip == .rtl8761bu)
        #expect(d.check(now: 100_000) == .needsFiles, "waiting for files is not a timeout")
        #expect(d.nextOutgoing() == false)
        #expect(d.nextDeadline() == nil)
        var setupOpcodes: [UInt16] = []
        RealtekTests.file.withRaw { firmware in
            hex("55 ab 23 87 00 00").withRaw { config in
                d.provideFiles(firmware: firmware, companion: config, now: 100)
                #expect(d.state == .settingUp)
                var now: UInt64 = 100
                for _ in 0..<20 {
                    guard d.state == .settingUp, d.nextOutgoing() else { break }
                    let packet = d.outgoing.bytes
                    let opcode = opcodeOf(packet)!
                    setupOpcodes.append(opcode)
                    let reply: [UInt8] = opcode == RealtekOpcode.download ? [packet[4]]
                        : opcode == RealtekOpcode.readROMVersion ? [1] : []
                    now += 10
                    deliver(&d, commandComplete(opcode, reply), now: now, &o)
                }
            }
        }
        // Read ROM Version, 3 downloads, Read ROM Version, Reset.
        #expect(setupOpcodes == [0xFC6D, 0xFC20, 0xFC20, 0xFC20, 0xFC6D, 0x0C03])
        #expect(d.state == .running)
        #expect(d.setup.table.realtek.loader.fragmentsSent == 3 && d.setup.table.realtek.error == nil)
        #expect(drain(&d) == [hciReset])
    }
}
