import BLEHost

/// Byte arrays from hex strings ("04 0e 04 01 03 0c 00").
public func hex(_ text: String) -> [UInt8] {
    text.split(separator: " ").map { UInt8($0, radix: 16)! }
}

extension Array where Element == UInt8 {
    public func withRaw<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

extension FixedBytes {
    public var bytes: [UInt8] { withBytes { Array($0) } }
}

extension ByteStore {
    /// The stored bytes, copied out (as `FixedBytes.bytes`).
    public var bytes: [UInt8] { withBytes { Array($0) } }
}

/// A delegate with one dynamic readable/writable attribute for ATT tests,
/// which keeps what the peer's server pushes to our client.
public struct RecordingDelegate: GATTDelegate {
    public var value: [UInt8] = []
    public var writes: [(UInt16, [UInt8])] = []
    public var subscriptions: [(UInt16, UInt16)] = []
    public var refuse: UInt8 = 0
    public var pushed: [Pushed] = []

    public init() {}

    public mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout Capacity.AttributeValue) -> UInt8 {
        self.value.withRaw { _ = value.append($0) }
        return 0
    }
    public mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        if refuse != 0 { return refuse }
        writes.append((attribute, Array(value)))
        return 0
    }
    public mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16) {
        subscriptions.append((attribute, value))
    }
}

extension RecordingDelegate {
    public enum Kind: Equatable { case notification, indication }
    /// A notification or indication from the peer's server.
    public struct Pushed: Equatable {
        public var kind: Kind
        public var connection: UInt16
        public var attribute: UInt16
        public var bytes: [UInt8]
        public init(kind: Kind, connection: UInt16, attribute: UInt16, bytes: [UInt8]) {
            (self.kind, self.connection, self.attribute, self.bytes) = (kind, connection, attribute, bytes)
        }
    }

    public mutating func clientNotification(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {
        pushed.append(Pushed(kind: .notification, connection: connection, attribute: attribute, bytes: Array(value)))
    }
    public mutating func clientIndication(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {
        pushed.append(Pushed(kind: .indication, connection: connection, attribute: attribute, bytes: Array(value)))
    }
}

/// A controller played by the test: it answers the host's commands and feeds events and ACL.
public struct ScriptedController<Delegate: GATTDelegate & ~Copyable>: ~Copyable {
    public var host: Host
    public var delegate: Delegate
    public var now: UInt64 = 0
    public var sent: [[UInt8]] = []
    public var events: [HostEvent] = []
    /// The report of each `.advertisingReport` in `events`, in order.
    public var reports: [AdvertisingReport] = []

    public init(
        delegate: consuming Delegate, role: Role = .peripheral, database: consuming GATTDatabase = testDatabase(),
        maxConnections: Int = 4
    ) {
        var configuration = HostConfiguration(role: role)
        configuration.maxConnections = maxConnections
        configuration.staticAddress = BDAddress.staticRandom(from: 0x1122_3344_5566)
        host = Host(configuration: configuration, database: database)
        self.delegate = delegate
    }


    /// Packets the host sends now (H4 framed).
    public mutating func drain() -> [[UInt8]] {
        var out: [[UInt8]] = []
        var packet = Capacity.HCIPacket()
        while host.nextOutgoing(into: &packet) { out.append(packet.bytes) }
        sent += out
        takeEvents()
        return out
    }

    /// Moves the host's events (and their reports) into `events` and `reports`.
    public mutating func takeEvents() {
        while let event = host.nextEvent() {
            events.append(event)
            if case .advertisingReport = event { reports.append(host.advertisingReport) }
        }
    }

    public mutating func feed(event bytes: [UInt8]) {
        bytes.withRaw { host.handlePacket(type: H4PacketType.event, $0, now: now, delegate: &delegate) }
        takeEvents()
    }

    public mutating func feed(acl bytes: [UInt8]) {
        bytes.withRaw { host.handlePacket(type: H4PacketType.acl, $0, now: now, delegate: &delegate) }
        takeEvents()
    }

    /// ACL for another delegate (an application under test that is its own).
    public mutating func feed<D: GATTDelegate & ~Copyable>(acl bytes: [UInt8], delegate: inout D) {
        bytes.withRaw { host.handlePacket(type: H4PacketType.acl, $0, now: now, delegate: &delegate) }
        takeEvents()
    }

    /// Command Complete for `opcode` with `parameters` after the status byte.
    public mutating func complete(_ opcode: UInt16, status: UInt8 = 0, _ parameters: [UInt8] = [], credits: UInt8 = 1) {
        let body: [UInt8] = [credits, UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + parameters
        feed(event: [0x0E, UInt8(body.count)] + body)
    }

    public mutating func status(_ opcode: UInt16, status: UInt8 = 0) {
        feed(event: [0x0F, 4, status, 1, UInt8(opcode & 0xFF), UInt8(opcode >> 8)])
    }

    public static func opcode(_ packet: [UInt8]) -> UInt16? { commandOpcode(packet) }

    /// Answers every command the host sends with success (and sensible return
    /// parameters) until it stops sending; returns the opcodes in order.
    @discardableResult
    public mutating func answerAll(publicAddress: [UInt8] = [0, 0, 0, 0, 0, 0], leBuffer: [UInt8] = [27, 0, 4]) -> [UInt16] {
        var opcodes: [UInt16] = []
        for _ in 0..<64 {
            let out = drain()
            let commands = out.compactMap(commandOpcode)
            if commands.isEmpty { break }
            for opcode in commands {
                opcodes.append(opcode)
                switch opcode {
                case HCIOpcode.readLocalVersion: complete(opcode, [0x0C, 0x00, 0x00, 0x0C, 0x5F, 0x00, 0x10, 0x22])
                case HCIOpcode.readBDAddr: complete(opcode, publicAddress)
                case HCIOpcode.readLocalCommands: complete(opcode, [UInt8](repeating: 0xFF, count: 64))
                case HCIOpcode.readLocalFeatures, HCIOpcode.leReadLocalFeatures: complete(opcode, [UInt8](repeating: 0, count: 8))
                case HCIOpcode.leReadBufferSize: complete(opcode, leBuffer)
                case HCIOpcode.readBufferSize: complete(opcode, [0xFD, 0x03, 0x40, 0x08, 0x00, 0x01, 0x00])
                case HCIOpcode.leCreateConnection, HCIOpcode.disconnect: status(opcode)
                default: complete(opcode)
                }
            }
        }
        return opcodes
    }

    /// LE Connection Complete from a random-address peer.
    public mutating func connect(handle: UInt16, asCentral: Bool = false) {
        feed(event: [0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), asCentral ? 0 : 1, 0x01,
                     1, 2, 3, 4, 5, 0xC6, 0x18, 0, 0, 0, 0x90, 0x01, 0])
    }

    /// One ACL packet carrying a whole L2CAP PDU on a channel.
    public mutating func l2cap(handle: UInt16, channel: UInt16, _ payload: [UInt8]) {
        feed(acl: Self.aclPacket(handle: handle, channel: channel, payload))
    }

    /// One ACL packet (start, not flushable) carrying a whole L2CAP PDU.
    public static func aclPacket(handle: UInt16, channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
        let pdu: [UInt8] = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF),
                            UInt8(channel >> 8)] + payload
        return [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8)] + pdu
    }

    public mutating func l2cap<D: GATTDelegate & ~Copyable>(
        handle: UInt16, channel: UInt16, _ payload: [UInt8], delegate: inout D
    ) {
        feed(acl: Self.aclPacket(handle: handle, channel: channel, payload), delegate: &delegate)
    }

    /// ACL packets the host sent, reassembled into (channel, payload) per L2CAP PDU.
    public static func l2capPDUs(_ packets: [[UInt8]]) -> [(UInt16, [UInt8])] {
        var result: [(UInt16, [UInt8])] = []
        var buffer: [UInt8] = []
        for packet in packets where packet.first == 0x02 {
            let boundary = (packet[2] >> 4) & 0x3
            if boundary == 0 { buffer = [] }
            buffer += packet[5...]
            if buffer.count >= 4 {
                let length = Int(buffer[0]) | Int(buffer[1]) << 8
                if buffer.count == length + 4 {
                    result.append((UInt16(buffer[2]) | UInt16(buffer[3]) << 8, Array(buffer[4...])))
                    buffer = []
                }
            }
        }
        return result
    }
}

/// GAP + GATT + one service with a dynamic read/write/notify characteristic.
public func testDatabase() -> GATTDatabase {
    var db = GATTDatabase()
    hex("54 65 73 74").withRaw { _ = db.addGAPAndGATTServices(name: $0, appearance: 0) }
    db.addPrimaryService(BLEUUID(uuid16: 0x180F))
    db.addCharacteristic(BLEUUID(uuid16: 0x2A19),
                         properties: CharacteristicProperties.read.union(.write).union(.notify))
    return db
}

/// The opcode of an H4 command packet, nil for other packets. A free function:
/// `compactMap(Self.opcode)` would capture the generic metatype (a Sendable warning).
func commandOpcode(_ packet: [UInt8]) -> UInt16? {
    packet.first == 0x01 ? UInt16(packet[1]) | UInt16(packet[2]) << 8 : nil
}
