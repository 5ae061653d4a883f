import Testing
import BLEHost
@testable import VendorDrivers
import TestSupport

// `VendorSetup` run by the core's `HostDriver` as the controller's first init
// step, the way the Linux board runs it: the Realtek probe, its hand-over to
// the Intel loader, the files, the timeouts, a stop during the set-up.

/// An application that keeps every packet the driver hands it.
struct PacketApp: HostApplication {
    var received: [[UInt8]] = []

    mutating func receive(type: UInt8, _ packet: UnsafeRawBufferPointer, host: inout Host, now: UInt64) {
        received.append([type] + Array(packet))
        var none = NoGATTDelegate()
        host.handlePacket(type: type, packet, now: now, delegate: &none)
    }
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {}
    mutating func poll(host: inout Host, now: UInt64) {}
}

/// What the board sees: every packet received.
struct PacketObserver: DriverObserver {
    var received: [[UInt8]] = []
    mutating func observe(_ event: HostEvent, host: inout Host) {}
    mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer) { received.append([type] + Array(packet)) }
}

typealias VendorDriver = HostDriver<PacketApp, VendorSetup>

/// The driver of the Linux board for a UART or virtual controller (`--firmware-dir` given).
func probeDriver(settings: DriverSettings = DriverSettings()) -> VendorDriver {
    var configuration = HostConfiguration(role: .peripheral)
    configuration.staticAddress = BDAddress.staticRandom(from: 0x1122_3344_5566)
    return HostDriver(host: Host(configuration: configuration, database: testDatabase()), app: PacketApp(),
                      setup: VendorSetup(plan: .probe, overUSB: false), settings: settings)
}

/// Command Complete for `opcode` (Core Vol 4 Part E §7.7.14): one credit, status, parameters.
func commandComplete(_ opcode: UInt16, status: UInt8 = 0, _ parameters: [UInt8] = []) -> [UInt8] {
    let body: [UInt8] = [1, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + parameters
    return [HCIEventCode.commandComplete, UInt8(body.count)] + body
}

/// Read Local Version Information return parameters after the status (Core Vol 4
/// Part E §7.4.1): HCI version, HCI revision, LMP version, manufacturer, LMP subversion.
func localVersion(manufacturer: UInt16, hciVersion: UInt8 = 0x0C, revision: UInt16 = 0, subversion: UInt16 = 0) -> [UInt8] {
    [hciVersion, UInt8(revision & 0xFF), UInt8(revision >> 8), hciVersion,
     UInt8(manufacturer & 0xFF), UInt8(manufacturer >> 8), UInt8(subversion & 0xFF), UInt8(subversion >> 8)]
}

func opcodeOf(_ packet: [UInt8]) -> UInt16? {
    packet.first == H4PacketType.command && packet.count >= 3 ? UInt16(packet[1]) | UInt16(packet[2]) << 8 : nil
}

/// The packets the driver sends now (H4: indicator first).
func drain(_ d: inout VendorDriver) -> [[UInt8]] {
    var out: [[UInt8]] = []
    while d.nextOutgoing() { out.append(d.outgoing.bytes) }
    return out
}

func deliver(_ d: inout VendorDriver, _ packet: [UInt8], now: UInt64, _ o: inout PacketObserver) {
    packet.withRaw { d.receive(type: H4PacketType.event, $0, now: now, observer: &o) }
}

/// A healthy controller for the host's own bring-up: answers every command
/// until the driver stops sending; returns the opcodes in order.
@discardableResult
func answerAll(_ d: inout VendorDriver, now: UInt64, _ o: inout PacketObserver) -> [UInt16] {
    var opcodes: [UInt16] = []
    for _ in 0..<64 {
        let commands = drain(&d).compactMap(opcodeOf)
        if commands.isEmpty { break }
        for opcode in commands {
            opcodes.append(opcode)
            let parameters: [UInt8] = switch opcode {
            case HCIOpcode.readLocalVersion: localVersion(manufacturer: 0x005F)
            case HCIOpcode.readBDAddr: [0, 0, 0, 0, 0, 0]
            case HCIOpcode.readLocalCommands: [UInt8](repeating: 0xFF, count: 64)
            case HCIOpcode.readLocalFeatures, HCIOpcode.leReadLocalFeatures: [UInt8](repeating: 0, count: 8)
            case HCIOpcode.leReadBufferSize: [27, 0, 4]
            case HCIOpcode.readBufferSize: [0xFD, 0x03, 0x40, 0x08, 0x00, 0x01, 0x00]
            default: []
            }
            deliver(&d, commandComplete(opcode, parameters), now: now, &o)
        }
        d.service(now: now, observer: &o)
    }
    return opcodes
}

/// The board's loop with a controller that answers nothing, from deadline to
/// deadline, until the driver ends; returns the end, when, and what was sent.
func runSilent(_ d: inout VendorDriver, limit: UInt64, _ o: inout PacketObserver) -> (DriverState, UInt64, [[UInt8]]) {
    var now: UInt64 = 0
    var sent = drain(&d)
    for _ in 0..<1_000 {
        let state = d.check(now: now)
        if case .finished = state { return (state, now, sent) }
        guard let next = d.nextDeadline(), next <= limit else { return (state, now, sent) }
        now = max(now, next)
        d.service(now: now, observer: &o)
        sent += drain(&d)
    }
    Issue.record("the driver neither ended nor went idle")
    return (d.state, now, sent)
}

let hciReset = hex("01 03 0c 00")
let resetComplete = hex("0e 04 01 03 0c 00")
let readLocalVersion = hex("01 01 10 00")

@Suite struct VendorSetupTests {
    @Test func probeOfANonRealtekControllerEndsTheSetUpAndStartsTheHost() {
        var o = PacketObserver()
        var d = probeDriver()
        d.start(now: 0)
        #expect({ d.state == .settingUp }())
        #expect(drain(&d) == [hciReset])
        #expect(drain(&d).isEmpty, "one command at a time")
        deliver(&d, resetComplete, now: 10, &o)
        #expect({ d.check(now: 10) == .settingUp }())
        #expect(drain(&d) == [readLocalVersion])
        // Broadcom (0x000F), an unknown subversion: nothing to load.
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 0x000F)), now: 20, &o)
        #expect({ d.state == .running }())
        #expect({ d.check(now: 20) == .running }())
        // The set-up's two answers went to the board and the set-up, not to the application.
        #expect({ d.app.received.isEmpty }())
        #expect(o.received.count == 2)
        // The host's own bring-up begins with its own Reset.
        #expect(drain(&d) == [hciReset])
        deliver(&d, resetComplete, now: 30, &o)
        let opcodes = answerAll(&d, now: 40, &o)
        #expect(opcodes.first == HCIOpcode.readLocalVersion)
        #expect({ d.wasReady }())
        #expect({ d.setup.vendor == .realtek && !d.setup.intelAfterProbe }())
        #expect({ d.setup.realtekError == nil && d.setup.intelError == nil }())
        #expect({ d.check(now: 40_000) == .running }())
    }

    @Test func probeOfAnIntelControllerHandsOverToTheIntelLoader() {
        var o = PacketObserver()
        var d = probeDriver()
        d.start(now: 0)
        _ = drain(&d)
        deliver(&d, resetComplete, now: 10, &o)
        _ = drain(&d)
        // Intel's company identifier is 2: the Intel loader asks Intel Read Version (0xFC05, parameter 0xFF).
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion, localVersion(manufacturer: 0x0002)), now: 20, &o)
        #expect({ d.state == .settingUp }())
        #expect({ d.setup.vendor == .intel && d.setup.intelAfterProbe }())
        #expect(drain(&d) == [hex("01 05 fc 01 ff")])
        // Not over USB: commands and events stay on the usual endpoints.
        #expect({ !d.setup.commandOnBulk && !d.setup.eventsOnBulk }())
        // The Intel loader's answer timeout (5 s), counted from the last answer.
        #expect({ d.nextDeadline() == 5_020 }())
        #expect({ d.check(now: 5_019) == .settingUp }())
        #expect({ d.check(now: 5_020) == .finished(.setupSilent) }())
    }

    @Test func anIntelDongleOverUSBStartsAtResetAndUsesTheBulkEndpoints() {
        var o = PacketObserver()
        var configuration = HostConfiguration(role: .peripheral)
        configuration.staticAddress = BDAddress.staticRandom(from: 0x1122_3344_5566)
        var d = HostDriver(host: Host(configuration: configuration, database: testDatabase()), app: PacketApp(),
                           setup: VendorSetup(plan: .intel, overUSB: true))
        d.start(now: 0)
        #expect({ d.setup.vendor == .intel && !d.setup.intelAfterProbe }())
        #expect(drain(&d) == [hciReset])
        // Until the download is done the boot loader answers on bulk IN.
        #expect({ d.setup.eventsOnBulk && !d.setup.commandOnBulk }())
        deliver(&d, resetComplete, now: 10, &o)
        #expect(drain(&d) == [hex("01 05 fc 01 ff")])
        #expect({ d.nextDeadline() == 5_010 }())
    }

    @Test func refusedFilesFailTheSetUp() {
        var o = PacketObserver()
        var d = probeDriver()
        d.start(now: 0)
        _ = drain(&d)
        deliver(&d, resetComplete, now: 10, &o)
        _ = drain(&d)
        // RTL8822B needs a config file; none is given.
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion,
                                    localVersion(manufacturer: 0x005D, hciVersion: 0x07, revision: 0x0B, subversion: 0x8822)),
                now: 20, &o)
        #expect({ d.state == .needsFiles }())
        #expect({ d.setup.realtek.chip == .rtl8822b }())
        RealtekTests.file.withRaw { firmware in
            d.provideFiles(firmware: firmware, companion: UnsafeRawBufferPointer(start: nil, count: 0), now: 30)
        }
        #expect({ d.check(now: 30) == .finished(.setupFailed) }())
        #expect({ d.setup.realtekError == .configMissing && d.setup.intelError == nil }())
        #expect({ !d.nextOutgoing() }())
    }

    @Test func silentSetUp() {
        var o = PacketObserver()
        var d = probeDriver()
        d.start(now: 0)
        // The first answer may take the driver's first-answer timeout (3 s).
        #expect({ d.nextDeadline() == 3_000 }())
        let (state, at, sent) = runSilent(&d, limit: 60_000, &o)
        #expect(state == .finished(.setupSilent))
        #expect(at == 3_000)
        #expect(sent == [hciReset])

        // A USB dongle opened without a port reset that never answered: the board retries with one.
        var settings = DriverSettings()
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
        #expect({ q.nextDeadline() == 10_100 }())
        #expect({ q.check(now: 10_099) == .settingUp }())
        #expect({ q.check(now: 10_100) == .finished(.setupSilent) }())
    }

    @Test func stopDuringTheSetUpAbandonsIt() {
        var d = probeDriver()
        d.start(now: 0)
        #expect(drain(&d) == [hciReset])
        d.stop(now: 10)
        #expect({ d.check(now: 10) == .finished(.stopped) }())
        #expect({ !d.nextOutgoing() }())
    }

    @Test func realtekROMNeedsFilesThenDownloadsAndStartsTheHost() {
        var o = PacketObserver()
        var d = probeDriver()
        d.start(now: 0)
        _ = drain(&d)
        deliver(&d, resetComplete, now: 10, &o)
        _ = drain(&d)
        // RTL8761B: HCI version 0x0A, revision 0x000B, Realtek (0x005D), subversion 0x8761.
        deliver(&d, commandComplete(HCIOpcode.readLocalVersion,
                                    localVersion(manufacturer: 0x005D, hciVersion: 0x0A, revision: 0x0B, subversion: 0x8761)),
                now: 20, &o)
        #expect({ d.state == .needsFiles }())
        #expect({ d.setup.realtek.chip == .rtl8761bu }())
        #expect({ d.check(now: 100_000) == .needsFiles }(), "waiting for files is not a timeout")
        #expect({ !d.nextOutgoing() }())
        #expect({ d.nextDeadline() == nil }())
        var setupOpcodes: [UInt16] = []
        RealtekTests.file.withRaw { firmware in
            hex("55 ab 23 87 00 00").withRaw { config in
                d.provideFiles(firmware: firmware, companion: config, now: 100)
                #expect({ d.state == .settingUp }())
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
        #expect({ d.state == .running }())
        #expect({ d.setup.realtek.fragmentsSent == 3 && d.setup.realtekError == nil }())
        #expect(drain(&d) == [hciReset])
        #expect({ d.app.received.isEmpty }())
    }
}
