import Testing
@testable import BLEHost
import TestSupport

/// Every ATT request's success and error responses (Core Vol 3 Part F §3.4) over
/// testDatabase(): handles 1 GAP svc, 2-3 Device Name, 4-5
/// Appearance, 6 GATT svc, 7-8 Service Changed, 9 its CCCD, 10 Battery svc,
/// 11 char decl, 12 dynamic value (read/write/notify), 13 its CCCD.
@Suite final class ATTServerTests {
    init() {}

    var server = ATTServer(database: testDatabase())
    var bearer = ATTBearer()
    var delegate = RecordingDelegate()

    func request(_ pdu: [UInt8], mtu: UInt16 = 23) -> (response: [UInt8], note: ATTServerNote) {
        bearer.mtu = mtu
        var response = Capacity.ATTPDU()
        let note = pdu.withRaw { server.receive($0, connection: 0x40, bearer: &bearer, delegate: &delegate, response: &response) }
        #expect(response.count <= Int(mtu))
        return (response.bytes, note)
    }

    static func error(_ request: UInt8, _ handle: UInt16, _ code: UInt8) -> [UInt8] {
        [0x01, request, UInt8(handle & 0xFF), UInt8(handle >> 8), code]
    }

    @Test func exchangeMTU() {
        // Our server offers 517 on Linux (Capacity.attMTU; the firmware build 247):
        // an iPhone-like client asking 247 gets 247.
        let (response, note) = request(hex("02 f7 00"))
        #expect(response == hex("03 05 02"))
        #expect(note == .mtuExchanged(247))
        #expect(bearer.mtu == 247)
        // Set once per connection (Vol 3 Part F §3.4.2.2): a second request is
        // answered alike and changes nothing.
        let again = request(hex("02 64 00"), mtu: bearer.mtu)
        #expect(again.response == hex("03 05 02") && again.note == .none && bearer.mtu == 247)
        #expect(request(hex("02 17")).response == Self.error(0x02, 0, 0x04))
        // A client MTU below 23 still means 23.
        bearer = ATTBearer()
        #expect(request(hex("02 10 00")).note == .mtuExchanged(23))
        // Android's 517 is taken whole; more is cut to ours.
        bearer = ATTBearer()
        #expect(request(hex("02 05 02")).note == .mtuExchanged(517) && bearer.mtu == 517)
        bearer = ATTBearer()
        #expect(request(hex("02 00 04")).note == .mtuExchanged(517) && bearer.mtu == 517)
    }

    /// The capacities follow the MTU: a whole 517-byte PDU fits every buffer it
    /// is built in or gathered into (docs/ARCHITECTURE.md, "State in place").
    @Test func buffersHoldTheLargestMTU() {
        #expect(ATT.maxMTU == 517)
        #expect(Capacity.ATTPDU.capacityCount >= Int(ATT.maxMTU))
        #expect(Capacity.ATTPDUStore.capacityCount >= Int(ATT.maxMTU))
        #expect(L2CAPReassembler.capacity >= 4 + Int(ATT.maxMTU))
        // A Prepare Write Response echoes up to MTU - 5 bytes; the queue holds a whole value.
        #expect(Capacity.PreparedWriteBytes.capacityCount >= ATT.maxValueLength)
        // An outgoing fragment carries at most 251 bytes, whatever the MTU.
        #expect(Capacity.HCIPacket.capacityCount >= 1 + 4 + 251)
    }

    /// At MTU 517 a 512-byte value is one Write Request; 513 bytes are refused
    /// with Invalid Attribute Value Length (§3.2.9), and a Prepare Write of 512
    /// bytes is echoed whole (517 bytes).
    @Test func writeOf512BytesAtMTU517() {
        let value = [UInt8](repeating: 0x61, count: 511) + [0x3F]
        #expect(request([0x12, 0x0C, 0x00] + value, mtu: 517).response == hex("13"))
        #expect(delegate.writes.last?.1 == value)
        #expect(request([0x12, 0x0C, 0x00] + value + [0x3F], mtu: 517).response == Self.error(0x12, 0x0C, 0x0D))
        // One byte past the MTU (a 518-byte PDU) is an invalid PDU, as at every MTU.
        #expect(request([0x12, 0x0C, 0x00] + value + [0x3F, 0x3F, 0x3F], mtu: 517).response == Self.error(0x12, 0, 0x04))
        let prepare = [0x16, 0x0C, 0x00, 0x00, 0x00] + value
        let echoed = request(prepare, mtu: 517).response
        #expect(echoed.count == 517 && echoed == [0x17] + Array(prepare[1...]))
        #expect(request(hex("18 01"), mtu: 517).response == hex("19"))
        #expect(delegate.writes.last?.1 == value)
    }

    @Test func findInformation() {
        // 16-bit format for handles 1..9.
        let (response, _) = request(hex("04 01 00 09 00"))
        #expect(response[0] == 0x05 && response[1] == 0x01)
        #expect(Array(response[2..<6]) == hex("01 00 00 28"))
        #expect((response.count - 2) % 4 == 0)
        #expect(request(hex("04 00 00 ff ff")).response == Self.error(0x04, 0, 0x01))
        #expect(request(hex("04 05 00 04 00")).response == Self.error(0x04, 5, 0x01))
        #expect(request(hex("04 0e 00 ff ff")).response == Self.error(0x04, 14, 0x0A))
        #expect(request(hex("04 01 00")).response == Self.error(0x04, 0, 0x04))
    }

    @Test func findInformation128BitFormat() {
        var db = GATTDatabase()
        db.addPrimaryService(BLEUUID(high: 0x8E38_140A_27BE_4090, low: 0x8955_4FC4_B569_8D1E))
        db.addCharacteristic(BLEUUID(high: 0x1, low: 0x2), properties: .read)
        server = ATTServer(database: db)
        let (response, _) = request(hex("04 03 00 03 00"))
        #expect(response.count == 2 + 18 && response[1] == 0x02)
    }

    @Test func findByTypeValueDiscoversServiceRange() {
        let (response, _) = request(hex("06 01 00 ff ff 00 28 0f 18"))
        #expect(response == hex("07 0a 00 0d 00"))
        #expect(request(hex("06 01 00 ff ff 00 28 99 99")).response == Self.error(0x06, 1, 0x0A))
        #expect(request(hex("06 02 00 01 00 00 28 0f 18")).response == Self.error(0x06, 2, 0x01))
        #expect(request(hex("06 01 00 ff ff 00")).response == Self.error(0x06, 0, 0x04))
    }

    @Test func readByTypeCharacteristicDeclarations() {
        let (response, _) = request(hex("08 0a 00 0d 00 03 28"))
        // One 7-byte entry: handle 11, properties 0x1A, value handle 12, UUID 0x2A19.
        #expect(response == hex("09 07 0b 00 1a 0c 00 19 2a"))
        #expect(request(hex("08 0e 00 ff ff 03 28")).response == Self.error(0x08, 14, 0x0A))
        #expect(request(hex("08 01 00 ff ff 03")).response == Self.error(0x08, 0, 0x04))
    }

    @Test func readByTypeDeviceNameAndDynamicValue() {
        #expect(request(hex("08 01 00 ff ff 00 2a")).response == hex("09 06 03 00 54 65 73 74"))
        delegate.value = hex("64")
        #expect(request(hex("08 01 00 ff ff 19 2a")).response == hex("09 03 0c 00 64"))
        // Service Changed is not readable: the first match's error is the response.
        #expect(request(hex("08 01 00 ff ff 05 2a")).response == Self.error(0x08, 8, 0x02))
    }

    @Test func readByGroupType() {
        let (response, _) = request(hex("10 01 00 ff ff 00 28"))
        #expect(response == hex("11 06 01 00 05 00 00 18 06 00 09 00 01 18 0a 00 0d 00 0f 18"))
        #expect(request(hex("10 01 00 ff ff 03 28")).response == Self.error(0x10, 1, 0x10))
        #expect(request(hex("10 0b 00 ff ff 00 28")).response == Self.error(0x10, 11, 0x0A))
        #expect(request(hex("10 00 00 ff ff 00 28")).response == Self.error(0x10, 0, 0x01))
    }

    @Test func readAndReadBlob() {
        #expect(request(hex("0a 03 00")).response == hex("0b 54 65 73 74"))
        #expect(request(hex("0a 00 00")).response == Self.error(0x0A, 0, 0x01))
        #expect(request(hex("0a 20 00")).response == Self.error(0x0A, 0x20, 0x01))
        #expect(request(hex("0a 08 00")).response == Self.error(0x0A, 8, 0x02))
        #expect(request(hex("0a 03")).response == Self.error(0x0A, 0, 0x04))
        delegate.value = Array(0..<40)
        #expect(request(hex("0a 0c 00")).response == [0x0B] + Array(0..<22))  // cut to MTU - 1
        #expect(request(hex("0c 0c 00 16 00")).response == [0x0D] + Array(22..<40))
        #expect(request(hex("0c 0c 00 28 00")).response == hex("0d"))  // offset == length: empty
        #expect(request(hex("0c 0c 00 29 00")).response == Self.error(0x0C, 12, 0x07))
    }

    @Test func readMultiple() {
        delegate.value = hex("aa bb")
        #expect(request(hex("0e 03 00 0c 00")).response == hex("0f 54 65 73 74 aa bb"))
        #expect(request(hex("0e 03 00 08 00")).response == Self.error(0x0E, 8, 0x02))
        #expect(request(hex("0e 03 00 30 00")).response == Self.error(0x0E, 0x30, 0x01))
        #expect(request(hex("0e 03 00")).response == Self.error(0x0E, 0, 0x04))
    }

    @Test func writeRequestAndErrors() {
        #expect(request(hex("12 0c 00 01 02")).response == hex("13"))
        #expect(delegate.writes.count == 1 && delegate.writes[0].1 == hex("01 02"))
        #expect(request(hex("12 03 00 41")).response == Self.error(0x12, 3, 0x03))  // read-only
        #expect(request(hex("12 00 00 41")).response == Self.error(0x12, 0, 0x01))
        #expect(request(hex("12 40 00 41")).response == Self.error(0x12, 0x40, 0x01))
        #expect(request(hex("12 0c")).response == Self.error(0x12, 0, 0x04))
        delegate.refuse = 0x0E
        #expect(request(hex("12 0c 00 41")).response == Self.error(0x12, 12, 0x0E))
    }

    @Test func cccdWrites() {
        let (response, note) = request(hex("12 0d 00 01 00"))
        #expect(response == hex("13"))
        #expect(note == .subscription(attribute: 12, value: 1))
        #expect(bearer.cccd[1] == 1)
        #expect(request(hex("0a 0d 00")).response == hex("0b 01 00"))
        #expect(request(hex("12 0d 00 01")).response == Self.error(0x12, 13, 0x0D))
        // Indications are not a property of this characteristic.
        #expect(request(hex("12 0d 00 02 00")).response == Self.error(0x12, 13, 0xFD))
        #expect(request(hex("12 09 00 02 00")).response == hex("13"))  // Service Changed: indicate
    }

    @Test func writeCommandIsSilent() {
        #expect(request(hex("52 0c 00 01")).response.isEmpty)
        #expect(delegate.writes.isEmpty)  // the value is not write-without-response
        #expect(request(hex("52 0d 00 01 00")).response.isEmpty)
        #expect(bearer.cccd[1] == 1)  // CCCDs accept it
        #expect(request(hex("52")).response.isEmpty)
    }

    @Test func preparedWritesAssembleLongValue() {
        let value = [UInt8](repeating: 0x61, count: 299) + [0x3F]
        var offset = 0
        while offset < value.count {
            let part = Array(value[offset..<min(offset + 18, value.count)])
            let pdu = [0x16, 0x0C, 0x00, UInt8(offset & 0xFF), UInt8(offset >> 8)] + part
            #expect(request(pdu).response == [0x17] + Array(pdu[1...]))
            offset += part.count
        }
        #expect(request(hex("18 01")).response == hex("19"))
        #expect(delegate.writes.count == 1 && delegate.writes[0].1 == value)
        // The queue is empty again.
        #expect(request(hex("18 01")).response == hex("19"))
        #expect(delegate.writes.count == 1)
    }

    @Test func preparedWriteErrors() {
        #expect(request(hex("16 03 00 00 00 41")).response == Self.error(0x16, 3, 0x03))
        #expect(request(hex("16 50 00 00 00 41")).response == Self.error(0x16, 0x50, 0x01))
        #expect(request(hex("16 0c 00 00")).response == Self.error(0x16, 0, 0x04))
        // A gap in the offsets: Invalid Offset at execution.
        _ = request(hex("16 0c 00 05 00 41"))
        #expect(request(hex("18 01")).response == Self.error(0x18, 12, 0x07))
        // Cancel drops everything.
        _ = request(hex("16 0c 00 00 00 41"))
        #expect(request(hex("18 00")).response == hex("19"))
        #expect(request(hex("18 01")).response == hex("19"))
        #expect(delegate.writes.isEmpty)
        #expect(request(hex("18 02")).response == Self.error(0x18, 0, 0x04))
        // Parts adding up past 512 bytes: Invalid Attribute Value Length.
        for i in 0..<29 {
            let offset = i * 18
            _ = request([0x16, 0x0C, 0x00, UInt8(offset & 0xFF), UInt8(offset >> 8)] + [UInt8](repeating: 1, count: 18))
        }
        #expect(request(hex("18 01")).response == Self.error(0x18, 12, 0x0D))
        #expect(delegate.writes.isEmpty)
    }

    @Test func prepareQueueFull() {
        var full = false
        for i in 0..<100 where !full {
            let response = request([0x16, 0x0C, 0x00, UInt8(i * 18 & 0xFF), UInt8(i * 18 >> 8)] + [UInt8](repeating: 1, count: 18)).response
            if response == Self.error(0x16, 12, 0x09) { full = true }
        }
        #expect(full)
    }

    @Test func unknownRequestsAndCommands() {
        #expect(request(hex("20 01 00 02 00")).response == Self.error(0x20, 0, 0x06))  // Read Multiple Variable
        #expect(request(hex("7f 00")).response.isEmpty)  // unknown command (bit 6)
        #expect(request(hex("d2 0c 00 00")).response.isEmpty)  // signed write: ignored
        #expect(request(hex("1b 0c 00 01")).response.isEmpty)  // a notification is not for the server
        #expect(request(hex("1e")).note == .none)  // confirmation without an indication
        bearer.indicationPending = true
        #expect(request(hex("1e")).note == .none)
        let pending = bearer.indicationPending
        #expect(!pending)  // the confirmation frees the next indication
        #expect(request([]).response.isEmpty)
    }

    @Test func pduLongerThanMTUIsInvalid() {
        #expect(request([0x12, 0x0C, 0x00] + [UInt8](repeating: 0x41, count: 30)).response == Self.error(0x12, 0, 0x04))
        #expect(request([0x52, 0x0C, 0x00] + [UInt8](repeating: 0x41, count: 30)).response.isEmpty)
    }

    @Test func responsesRespectMTU() {
        delegate.value = [UInt8](repeating: 7, count: 512)
        for mtu: UInt16 in [23, 100, 247, 517] {
            #expect(request(hex("0a 0c 00"), mtu: mtu).response.count == min(Int(mtu), 1 + 512))
            #expect(request(hex("08 01 00 ff ff 19 2a"), mtu: mtu).response.count <= Int(mtu))
            #expect(request(hex("04 01 00 ff ff"), mtu: mtu).response.count <= Int(mtu))
        }
    }
}

/// The routing table against the rule it replaced (odd opcodes 0x03-0x19, the
/// Error Response, notifications, indications, 0x21, 0x23 to the client):
/// every one of the 256 opcodes goes where it went.
@Suite struct ATTRouteTests {
    static func formerRule(_ opcode: UInt8) -> Bool {
        switch opcode {
        case 0x01, 0x1B, 0x1D, 0x21, 0x23: true
        case 0x03...0x19: opcode & 1 == 1
        default: false
        }
    }

    @Test func everyOpcodeGoesWhereItWent() {
        for opcode in UInt8.min...UInt8.max {
            #expect(ATTRoute.toClient(opcode) == Self.formerRule(opcode), "opcode \(opcode)")
            let answered = opcode & 0x40 == 0 && !Self.formerRule(opcode) && opcode != 0x1E
            #expect(ATTRoute.expectsResponse(opcode) == answered, "opcode \(opcode)")
        }
    }
}
