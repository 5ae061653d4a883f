import BLEHost
import Testing

// A `HostLoop` under test, for any `ControllerSetup` (none, a scripted one,
// the vendors'): the application and the board's observer that record what the
// driver hands them, the controller's answers, and the board's loop.

/// The name of an event's case ("ready", "controllerTimeout", …).
public func eventKind(_ event: HostEvent) -> String {
    String(String(describing: event).prefix { $0 != "(" })
}

/// An application that records what the driver hands it (events and polls:
/// packets go to the host, which serves no dynamic attribute for it).
public struct RecordingApp: HostApplication {
    public var events: [String] = []
    public var polls = 0
    public var finished = false

    public init() {}

    public mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) { events.append(eventKind(event)) }
    public mutating func poll(host: inout Host, now: UInt64) { polls += 1 }
    public var isFinished: Bool { finished }
}

/// What the board would log.
public struct RecordingObserver: HostLoopObserver {
    public var events: [String] = []
    public var received: [[UInt8]] = []
    public var losses: [FramingLoss] = []

    public init() {}

    public mutating func observe(_ event: HostEvent, host: borrowing Host) { events.append(eventKind(event)) }
    public mutating func received(type: UInt8, _ packet: UnsafeRawBufferPointer) { received.append([type] + Array(packet)) }
    public mutating func framingLost(_ why: FramingLoss) { losses.append(why) }
}

public typealias TestDriver<S: ControllerSetup> = HostLoop<RecordingApp, S>

/// The board's driver for `setup`: a peripheral with a static random address and the test database.
public func makeDriver<S: ControllerSetup>(_ setup: consuming S, settings: HostLoopSettings = HostLoopSettings()) -> TestDriver<S> {
    var configuration = HostConfiguration(role: .peripheral)
    configuration.staticAddress = BDAddress.staticRandom(from: 0x1122_3344_5566)
    return HostLoop(host: Host(configuration: configuration, database: testDatabase()), app: RecordingApp(),
                      setup: setup, settings: settings)
}

/// Command Complete for `opcode` (Core Vol 4 Part E §7.7.14): one credit, status, parameters.
public func commandComplete(_ opcode: UInt16, status: UInt8 = 0, _ parameters: [UInt8] = []) -> [UInt8] {
    let body: [UInt8] = [1, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + parameters
    return [HCIEventCode.commandComplete, UInt8(body.count)] + body
}

/// Read Local Version Information return parameters after the status (Core Vol 4
/// Part E §7.4.1): HCI version, HCI revision, LMP version, manufacturer, LMP subversion.
public func localVersion(manufacturer: UInt16, hciVersion: UInt8 = 0x0C, revision: UInt16 = 0, subversion: UInt16 = 0) -> [UInt8] {
    [hciVersion, UInt8(revision & 0xFF), UInt8(revision >> 8), hciVersion,
     UInt8(manufacturer & 0xFF), UInt8(manufacturer >> 8), UInt8(subversion & 0xFF), UInt8(subversion >> 8)]
}

/// The opcode of an H4 command packet, nil for other packets.
public func opcodeOf(_ packet: [UInt8]) -> UInt16? {
    packet.first == H4PacketType.command && packet.count >= 3 ? UInt16(packet[1]) | UInt16(packet[2]) << 8 : nil
}

/// HCI_Reset as the host sends it (Core Vol 4 Part E §7.3.2), H4 framed.
public let hciReset = hex("01 03 0c 00")
/// Its Command Complete, success.
public let resetComplete = hex("0e 04 01 03 0c 00")

/// The packets the driver sends now (H4: indicator first).
public func drain<A: HostApplication, S: ControllerSetup>(_ d: inout HostLoop<A, S>) -> [[UInt8]] {
    var out: [[UInt8]] = []
    while d.nextOutgoing() { out.append(d.outgoing.bytes) }
    return out
}

/// One whole packet from the controller (an event unless `type` says otherwise).
public func deliver<A: HostApplication, S: ControllerSetup>(_ d: inout HostLoop<A, S>, type: UInt8 = H4PacketType.event, _ packet: [UInt8],
                                        now: UInt64, _ o: inout RecordingObserver) {
    packet.withRaw { d.receive(type: type, $0, now: now, observer: &o) }
}

/// Bytes of an H4 stream, as one read.
public func stream<S: ControllerSetup>(_ d: inout TestDriver<S>, _ bytes: [UInt8], now: UInt64, _ o: inout RecordingObserver) {
    bytes.withRaw { d.receive(stream: $0, now: now, observer: &o) }
}

/// Plays a healthy controller for the host's own bring-up: answers every
/// command the driver sends until it stops sending; returns the opcodes in order.
@discardableResult
public func answerAll<A: HostApplication, S: ControllerSetup>(_ d: inout HostLoop<A, S>, now: UInt64, _ o: inout RecordingObserver) -> [UInt16] {
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

/// Runs the board's loop with a controller that answers nothing, from deadline
/// to deadline, until the driver ends or `limit`; returns the end, when, and what was sent.
public func runSilent<S: ControllerSetup>(_ d: inout TestDriver<S>, from start: UInt64 = 0, limit: UInt64,
                                          _ o: inout RecordingObserver) -> (DriverState, UInt64, [[UInt8]]) {
    var now = start
    var sent: [[UInt8]] = drain(&d)
    for _ in 0..<1_000 {
        let state = d.check(now: now)
        if case .finished = state { return (state, now, sent) }
        guard let next = d.nextDeadline(), next <= limit else { return (state, now, sent) }
        now = max(now, next)
        d.service(now: now, waitedUntil: next, observer: &o)
        sent += drain(&d)
    }
    Issue.record("the driver neither ended nor went idle")
    return (d.state, now, sent)
}
