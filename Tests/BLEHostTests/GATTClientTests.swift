import Testing
@testable import BLEHost
import TestSupport

/// The GATT client's procedures against a scripted server: discovery, long
/// writes and reads, errors, notifications and indications, timeouts.
@Suite struct GATTClientTests {
    func connectedCentral() -> ScriptedController<RecordingDelegate> { ScannerTests().connectedCentral() }
    func clientEvents(_ c: borrowing ScriptedController<RecordingDelegate>) -> [GATTClientEvent] {
        ScannerTests().clientEvents(c)
    }
    func requests(_ c: borrowing ScriptedController<RecordingDelegate>) -> [[UInt8]] { ScannerTests().requests(c) }

    @Test func discoveryProcedures() {
        var c = connectedCentral()
        let first = c.host.clientExchangeMTU(connection: 0x40)
        let second = c.host.clientExchangeMTU(connection: 0x40)
        #expect(first && !second)  // one request at a time
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("03 40 00"))
        #expect(c.host.mtu(connection: 0x40) == 64)

        let service = BLEUUID(high: 0x8E38_140A_27BE_4090, low: 0x8955_4FC4_B569_8D1E)
        c.host.clientDiscoverPrimaryService(connection: 0x40, uuid: service)
        _ = c.drain()
        #expect(requests(c).last == hex("06 01 00 ff ff 00 28 1e 8d 69 b5 c4 4f 55 89 90 40 be 27 0a 14 38 8e"))
        c.l2cap(handle: 0x40, channel: 4, hex("07 0a 00 0f 00"))

        c.host.clientDiscoverCharacteristics(connection: 0x40, start: 0x0A, end: 0x0F)
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("09 07 0b 00 08 0c 00 19 2a"))
        _ = c.drain()
        #expect(requests(c).last == hex("08 0c 00 0f 00 03 28"))  // continues after the last declaration
        c.l2cap(handle: 0x40, channel: 4, hex("01 08 0c 00 0a"))  // Attribute Not Found ends it

        c.host.clientDiscoverDescriptors(connection: 0x40, start: 0x0D, end: 0x0F)
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("05 01 0e 00 02 29"))
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("01 04 0f 00 0a"))

        let events = clientEvents(c)
        #expect(events.contains { if case .mtuExchanged(0x40, 64) = $0 { true } else { false } })
        #expect(events.contains { if case .serviceDiscovered(0x40, 0x0A, 0x0F) = $0 { true } else { false } })
        #expect(events.contains { if case .characteristicsDiscovered(0x40, 1) = $0 { true } else { false } })
        #expect(events.contains { if case .descriptorsDiscovered(0x40, 1) = $0 { true } else { false } })
        let characteristic = c.host.clientCharacteristic(connection: 0x40, BLEUUID(uuid16: 0x2A19))
        let descriptor = c.host.clientDescriptor(connection: 0x40, BLEUUID(uuid16: 0x2902), after: 0x0C)
        #expect(characteristic?.valueHandle == 0x0C)
        #expect(descriptor?.handle == 0x0E)
    }

    @Test func writeLongValueWithPreparedWrites() {
        var c = connectedCentral()
        let value = [UInt8](repeating: 0x61, count: 40) + [0x3F]
        #expect(value.withRaw { c.host.clientWrite(connection: 0x40, attribute: 0x0C, value: $0) } == true)
        var sentParts = 0
        for _ in 0..<10 {
            _ = c.drain()
            guard let last = requests(c).last else { break }
            if last[0] == 0x16 {
                sentParts += 1
                c.l2cap(handle: 0x40, channel: 4, [0x17] + Array(last[1...]))  // echo
            } else if last[0] == 0x18 {
                #expect(last == hex("18 01"))
                c.l2cap(handle: 0x40, channel: 4, hex("19"))
                break
            }
        }
        #expect(sentParts == 3)  // 18 + 18 + 5 bytes at MTU 23
        #expect(clientEvents(c).contains { if case .writeCompleted(0x40, 0x0C) = $0 { true } else { false } })
    }

    @Test func prepareWriteErrorCancelsQueueThenReports() {
        var c = connectedCentral()
        let value = [UInt8](repeating: 0x61, count: 30)
        _ = value.withRaw { c.host.clientWrite(connection: 0x40, attribute: 0x0C, value: $0) }
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("01 16 0c 00 09"))
        _ = c.drain()
        #expect(requests(c).last == hex("18 00"))
        #expect(!clientEvents(c).contains { if case .error = $0 { true } else { false } })
        c.l2cap(handle: 0x40, channel: 4, hex("19"))
        #expect(clientEvents(c).contains { if case .error(0x40, 0x16, 0x0C, 0x09) = $0 { true } else { false } })
    }

    @Test func writeErrorAndNotification() {
        var c = connectedCentral()
        _ = hex("41").withRaw { c.host.clientWrite(connection: 0x40, attribute: 0x0C, value: $0) }
        _ = c.drain()
        #expect(requests(c).last == hex("12 0c 00 41"))
        c.l2cap(handle: 0x40, channel: 4, hex("01 12 0c 00 0e"))
        c.l2cap(handle: 0x40, channel: 4, hex("1b 0c 00 53 4c 55 47"))
        c.l2cap(handle: 0x40, channel: 4, hex("1d 0c 00 01"))
        _ = c.drain()
        let events = clientEvents(c)
        #expect(events.contains { if case .error(0x40, 0x12, 0x0C, 0x0E) = $0 { true } else { false } })
        // Notifications and indications go to the client delegate, where they lie.
        #expect(c.delegate.pushed == [
            RecordingDelegate.Pushed(kind: .notification, connection: 0x40, attribute: 0x0C, bytes: hex("53 4c 55 47")),
            RecordingDelegate.Pushed(kind: .indication, connection: 0x40, attribute: 0x0C, bytes: hex("01")),
        ])
        // An indication is confirmed at once.
        #expect(requests(c).last == hex("1e"))
    }

    @Test func readLongValue() {
        var c = connectedCentral()
        c.host.clientRead(connection: 0x40, attribute: 0x0C)
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, [0x0B] + [UInt8](repeating: 1, count: 22))
        _ = c.drain()
        #expect(requests(c).last == hex("0c 0c 00 16 00"))
        c.l2cap(handle: 0x40, channel: 4, hex("0d 02 02"))
        let read = c.host.withClientLink(connection: 0x40) { $0.readValue.bytes }
        #expect(read == [UInt8](repeating: 1, count: 22) + [2, 2])
    }

    @Test func unexpectedAndMalformedResponses() {
        var c = connectedCentral()
        c.l2cap(handle: 0x40, channel: 4, hex("13"))  // no request outstanding
        #expect(clientEvents(c).contains { if case .unexpectedResponse(0x40, 0x13) = $0 { true } else { false } })
        c.host.clientDiscoverCharacteristics(connection: 0x40, start: 1, end: 0xFFFF)
        _ = c.drain()
        c.l2cap(handle: 0x40, channel: 4, hex("09 05 01 00"))  // impossible entry length
        #expect(clientEvents(c).contains { if case .error(0x40, 0x08, 0, 0x04) = $0 { true } else { false } })
    }

    @Test func transactionTimeoutClosesTheLink() {
        var c = connectedCentral()
        c.now = 100
        c.host.tick(now: 100)
        c.host.clientExchangeMTU(connection: 0x40)
        _ = c.drain()
        c.host.tick(now: 100 + 30_000)
        let out = c.drain()
        #expect(out.contains { ScriptedController<RecordingDelegate>.opcode($0) == HCIOpcode.disconnect })
        #expect(clientEvents(c).contains { if case .timeout(0x40, 0x02) = $0 { true } else { false } })
    }
}
