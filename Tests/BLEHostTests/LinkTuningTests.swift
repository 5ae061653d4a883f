import Testing
@testable import BLEHost
import TestSupport

/// What the peripheral asks of a new link (LinkTuning.swift): its connection
/// parameters, the Data Length Extension and the 2M PHY where both sides can.
@Suite struct LinkTuningTests {
    typealias Controller = ScriptedController<RecordingDelegate>
    static let allFeatures = LEFeature.connectionParametersRequest | LEFeature.dataPacketLengthExtension
        | LEFeature.twoMegabitPHY

    /// A ready peripheral whose controller supports `local`, with link 0x40 just made.
    func connected(local: UInt64 = allFeatures, preferred: ConnectionParameters?? = nil) -> Controller {
        var c = ScriptedController(delegate: RecordingDelegate())
        if let preferred { c.host.configuration.preferredParameters = preferred }
        c.host.start(now: 0)
        c.answerAll()
        c.host.controller.leFeatures = local
        c.connect(handle: 0x40)
        c.events.removeAll()
        return c
    }

    /// LE Read Remote Features Complete (Vol 4 Part E §7.7.65.4) for 0x40.
    func remoteFeatures(_ c: inout Controller, _ features: UInt64, status: UInt8 = 0) {
        var event: [UInt8] = [0x3E, 12, LESubevent.readRemoteFeaturesComplete, status, 0x40, 0x00]
        for i in 0..<8 { event.append(UInt8(truncatingIfNeeded: features >> UInt64(8 * i))) }
        c.feed(event: event)
    }

    /// The commands sent until none is left, each answered with a Command Status.
    func commands(_ c: inout Controller) -> [[UInt8]] {
        var all: [[UInt8]] = []
        for _ in 0..<10 {
            let out = c.drain().filter { $0.first == H4PacketType.command }
            if out.isEmpty { break }
            all += out
            for packet in out { c.status(Controller.opcode(packet)!) }
        }
        return all
    }

    @Test func bothSidesCapableUseTheLinkLayerDataLengthAnd2M() {
        var c = connected()
        #expect(commands(&c) == [hex("01 16 20 02 40 00")], "LE Read Remote Features first")
        remoteFeatures(&c, Self.allFeatures)
        #expect(commands(&c) == [
            // LE Connection Update: 15-30 ms, latency 0, 4 s, CE lengths 0 (§7.8.18).
            hex("01 13 20 0e 40 00 0c 00 18 00 00 00 90 01 00 00 00 00"),
            // LE Set Data Length: 251 octets, 2120 µs (§7.8.33).
            hex("01 22 20 06 40 00 fb 00 48 08"),
            // LE Set PHY: 2M both ways (§7.8.49).
            hex("01 32 20 07 40 00 00 02 02 00 00"),
        ])
        #expect(Controller.l2capPDUs(c.sent).isEmpty, "no L2CAP request when the link layer can do it")
        c.feed(event: hex("3e 0a 03 00 40 00 18 00 00 00 90 01"))
        c.feed(event: hex("3e 0b 07 40 00 fb 00 48 08 fb 00 48 08"))
        c.feed(event: hex("3e 06 0c 00 40 00 02 02"))
        #expect(c.events.contains { if case .connectionUpdated(0x40, 24, 0, 400) = $0 { true } else { false } })
        #expect(c.events.contains { if case .dataLengthChanged(0x40, 251, 251) = $0 { true } else { false } })
        #expect(c.events.contains { if case .phyUpdated(0x40, 2, 2) = $0 { true } else { false } })
    }

    @Test func aCentralWithoutTheProcedureIsAskedOverL2CAPAndARefusalIsFinal() {
        var c = connected()
        _ = commands(&c)
        remoteFeatures(&c, 0)  // a 4.0 central: nothing more
        #expect(commands(&c).isEmpty)
        // Connection Parameter Update Request (Vol 3 Part A §4.20), identifier 1.
        let pdus = Controller.l2capPDUs(c.sent)
        #expect(pdus.count == 1 && pdus[0].0 == 5 && pdus[0].1 == hex("12 01 08 00 0c 00 18 00 00 00 90 01"))
        c.l2cap(handle: 0x40, channel: 5, hex("13 01 02 00 01 00"))  // rejected
        #expect(c.events.contains { if case .connectionParametersRefused(0x40) = $0 { true } else { false } })
        let before = c.sent.count
        c.l2cap(handle: 0x40, channel: 5, hex("13 01 02 00 01 00"))
        #expect(c.drain().isEmpty && c.sent.count == before, "no retry")
        #expect(c.events.filter { if case .connectionParametersRefused = $0 { true } else { false } }.count == 1)
    }

    @Test func malformedOrUnsolicitedAnswersFromTheCentralAreDroppedSilently() {
        var c = connected()
        _ = commands(&c)
        remoteFeatures(&c, 0)
        #expect(commands(&c).isEmpty)
        #expect(Controller.l2capPDUs(c.sent).count == 1, "the request, identifier 1")
        let before = c.sent.count
        for answer in ["13 01 04 00 01 00", "13 01 01 00 01", "13 07 02 00 01 00", "01 07 02 00 00 00",
                       "01 01 00 00", "15 01 02 00 00 00", "07 01 04 00 40 00 40 00"] {
            c.l2cap(handle: 0x40, channel: 5, hex(answer))
            #expect(c.drain().isEmpty, "\(answer): nothing is sent back (Vol 3 Part A §4.1)")
        }
        #expect(c.sent.count == before && c.host.connections[0].tuning == .askingCentral(identifier: 1))
        #expect(!c.events.contains { if case .connectionParametersRefused = $0 { true } else { false } })
        #expect(c.host.droppedOutput == 0, "responses are not pipelined requests")
        // The real answer still counts.
        c.l2cap(handle: 0x40, channel: 5, hex("01 01 02 00 00 00"))
        #expect(c.events.contains { if case .connectionParametersRefused(0x40) = $0 { true } else { false } })
    }

    @Test func linkEventsForAHandleWithNoConnectionAreDroppedAndNamedUnknown() {
        var c = connected()
        _ = commands(&c)
        let before = c.host.droppedInput
        c.feed(event: hex("3e 0a 03 00 ee 0e 18 00 00 00 90 01"))  // LE Connection Update Complete
        c.feed(event: hex("3e 0b 07 ee 0e fb 00 48 08 fb 00 48 08"))  // LE Data Length Change
        c.feed(event: hex("3e 06 0c 00 ee 0e 02 02"))  // LE PHY Update Complete
        let unknown = c.events.compactMap { if case .unknownConnection(let handle, let subevent) = $0 { (handle, subevent) } else { nil } }
        #expect(unknown.map(\.0) == [0x0EEE, 0x0EEE, 0x0EEE] && unknown.map(\.1) == [0x03, 0x07, 0x0C])
        #expect(!c.events.contains { switch $0 {
            case .connectionUpdated, .dataLengthChanged, .phyUpdated: true
            default: false
        } })
        #expect(c.host.droppedInput == before + 3)
        #expect(c.host.counts.droppedInput[InputDrop.aclUnknownHandle.index] == 3)
        // The line names the handle as unknown, not as a connection.
        var line = TextLine()
        c.events.last!.describe(into: &line, host: c.host)
        #expect(line.text == "dropped input: LE event 0xC for unknown connection 0xeee")  // TextLine: bytes unpadded
        #expect(c.events.last!.severity == .debug)
        // The link's own events still pass.
        c.feed(event: hex("3e 06 0c 00 40 00 02 02"))
        #expect(c.events.contains { if case .phyUpdated(0x40, 2, 2) = $0 { true } else { false } })
    }

    @Test func aLinkLayerFailureFallsBackToL2CAPOnce() {
        var c = connected()
        _ = commands(&c)
        remoteFeatures(&c, LEFeature.connectionParametersRequest)
        #expect(commands(&c).compactMap(Controller.opcode) == [HCIOpcode.leConnectionUpdate])
        c.feed(event: hex("3e 0a 03 1a 40 00 00 00 00 00 00 00"))  // Unsupported Remote Feature
        let pdus = Controller.l2capPDUs(c.drain())
        #expect(pdus.map(\.0) == [5] && pdus[0].1.first == L2CAPSignalCode.connectionParameterUpdateRequest)
        c.l2cap(handle: 0x40, channel: 5, hex("13 01 02 00 00 00"))  // accepted
        #expect(!c.events.contains { if case .connectionParametersRefused = $0 { true } else { false } })
    }

    @Test func optionalStepsRefusedByTheControllerAreHarmless() {
        var c = connected()
        _ = commands(&c)
        remoteFeatures(&c, Self.allFeatures)
        // Bumble's controller answers Unknown HCI Command (0x01) to LE Set Data Length and LE Set PHY.
        var refused: [UInt16] = []
        for _ in 0..<4 {
            for packet in c.drain() where packet.first == H4PacketType.command {
                let opcode = Controller.opcode(packet)!
                if opcode == HCIOpcode.leConnectionUpdate { c.status(opcode) } else { c.complete(opcode, status: 0x01); refused.append(opcode) }
            }
        }
        #expect(refused == [HCIOpcode.leSetDataLength, HCIOpcode.leSetPHY])
        #expect(!c.events.contains { if case .commandFailed = $0 { true } else { false } })
        #expect(c.events.filter { if case .linkOptionRefused = $0 { true } else { false } }.count == 2)
        #expect(HostEvent.linkOptionRefused(opcode: HCIOpcode.leSetPHY, status: 1).severity == .debug)
    }

    @Test func anUnansweredSetPHYIsGivenUpWithoutAReset() {
        // Bumble's controller never answers LE Set PHY: after 250 ms the host
        // gives it up, probes the controller, and never sends it again.
        var c = connected()
        _ = commands(&c)
        remoteFeatures(&c, LEFeature.twoMegabitPHY)
        #expect(c.drain().compactMap(Controller.opcode) == [HCIOpcode.leSetPHY])
        c.now = 249
        c.host.tick(now: c.now)
        #expect(c.drain().isEmpty)
        c.now = 250
        c.host.tick(now: c.now)
        c.takeEvents()
        #expect(c.events.contains { if case .linkOptionRefused(HCIOpcode.leSetPHY, nil) = $0 { true } else { false } })
        #expect(c.drain().compactMap(Controller.opcode) == [HCIOpcode.readLocalVersion])
        #expect(c.host.recoveries == 0 && c.host.connectionCount == 1)
        c.complete(HCIOpcode.readLocalVersion, [0x0C, 0, 0, 0x0C, 0x5F, 0, 0x10, 0x22])
        // The next link is not asked for 2M again.
        c.connect(handle: 0x41)
        let opcodes = commands(&c).compactMap(Controller.opcode)
        #expect(opcodes.contains(HCIOpcode.leReadRemoteFeatures))
        var event: [UInt8] = [0x3E, 12, LESubevent.readRemoteFeaturesComplete, 0, 0x41, 0x00]
        event += [0, 1, 0, 0, 0, 0, 0, 0]  // 2M
        c.feed(event: event)
        #expect(!commands(&c).compactMap(Controller.opcode).contains(HCIOpcode.leSetPHY))
    }

    @Test func parametersOffStillAsksForDataLengthAnd2M() {
        var c = connected(preferred: .some(nil))
        _ = commands(&c)
        remoteFeatures(&c, Self.allFeatures)
        #expect(commands(&c).compactMap(Controller.opcode) == [HCIOpcode.leSetDataLength, HCIOpcode.leSetPHY])
        #expect(Controller.l2capPDUs(c.sent).isEmpty)
    }

    @Test func shortTuningEventsAndAnswersAreDroppedNotRead() {
        var c = connected()
        _ = commands(&c)
        let before = c.host.droppedInput
        // LE Read Remote Features Complete, Data Length Change and PHY Update Complete cut short.
        for event in ["3e 05 04 00 40 00 01", "3e 05 07 40 00 fb 00", "3e 04 0c 00 40 00"] { c.feed(event: hex(event)) }
        #expect(c.host.droppedInput == before + 3)
        #expect(!c.events.contains { if case .dataLengthChanged = $0 { true } else { false } })
        #expect(!c.events.contains { if case .phyUpdated = $0 { true } else { false } })
        // A Connection Parameter Update Response of the wrong length answers nothing and is not taken.
        remoteFeatures(&c, 0)
        c.l2cap(handle: 0x40, channel: 5, hex("13 01 01 00 01"))
        #expect(!c.events.contains { if case .connectionParametersRefused = $0 { true } else { false } })
        #expect(c.host.connections[0].tuning == .askingCentral(identifier: 1))
    }

    @Test func aLinkWhereWeAreTheCentralIsLeftAsItIs() {
        var c = ScriptedController(delegate: RecordingDelegate(), role: .central)
        c.host.start(now: 0)
        c.answerAll()
        c.connect(handle: 0x40, asCentral: true)
        #expect(!c.drain().compactMap(Controller.opcode).contains(HCIOpcode.leReadRemoteFeatures))
    }
}
