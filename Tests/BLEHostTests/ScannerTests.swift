import Testing
@testable import BLEHost
import TestSupport

/// GAP central and GATT client procedures against recorded server responses.
/// The central's GAP: scanning, advertising reports, connection establishment.
@Suite struct ScannerTests {
    func readyCentral() -> ScriptedController<RecordingDelegate> {
        var c = ScriptedController(delegate: RecordingDelegate(), role: .central, database: GATTDatabase(), maxConnections: 1)
        c.host.start(now: 0)
        c.answerAll()
        return c
    }

    func connectedCentral() -> ScriptedController<RecordingDelegate> {
        var c = readyCentral()
        c.host.connect(to: BDAddress(value: 0xC6_1805_0403_0201, type: 1), timeout: 5_000)
        c.answerAll()
        c.connect(handle: 0x40, asCentral: true)
        c.answerAll()
        return c
    }

    func clientEvents(_ c: borrowing ScriptedController<RecordingDelegate>) -> [GATTClientEvent] {
        c.events.compactMap { if case .gattClient(let e) = $0 { e } else { nil } }
    }

    /// An LE Meta event around `body` (subevent code first).
    func meta(_ body: [UInt8]) -> [UInt8] { [0x3E, UInt8(body.count)] + body }

    /// The ATT requests the host sent, in order.
    func requests(_ c: borrowing ScriptedController<RecordingDelegate>) -> [[UInt8]] {
        ScriptedController<RecordingDelegate>.l2capPDUs(c.sent).filter { $0.0 == 4 }.map(\.1)
    }

    @Test func scanningCommands() {
        var c = readyCentral()
        c.host.startScanning()
        // Active scan, 60 ms interval / 30 ms window, random own address, then enable
        // without controller duplicate filtering (every report's RSSI is judged by the
        // central, not only the first); one command at a time.
        #expect(c.drain() == [hex("01 0b 20 07 01 60 00 30 00 01 00")])
        c.complete(HCIOpcode.leSetScanParameters)
        #expect(c.drain() == [hex("01 0c 20 02 01 00")])
        c.complete(HCIOpcode.leSetScanEnable)
        #expect(c.host.isScanning == true)
        c.host.stopScanning()
        #expect(c.drain() == [hex("01 0c 20 02 00 00")])
        c.complete(HCIOpcode.leSetScanEnable)
        #expect(c.host.isScanning == false)
    }

    @Test func legacyAndExtendedReports() {
        var c = readyCentral()
        // LE Advertising Report (0x02): two reports, ADV_IND then SCAN_RSP.
        c.feed(event: meta(hex("02 02 00 01 01 02 03 04 05 c6 03 02 01 06 ce 04 01 01 02 03 04 05 c6 04 03 09 48 69 ce")))
        // LE Extended Advertising Report (0x0D), legacy ADV_IND (type 0x0013), RSSI -50.
        c.feed(event: meta(hex("0d 01 13 00 01 11 22 33 44 55 c6 01 00 ff 7f ce 00 00 00 00 00 00 00 00 00 03 02 01 06")))
        let reports = c.reports
        #expect(c.events.filter { if case .advertisingReport = $0 { true } else { false } }.count == 3)
        #expect(reports.count == 3)
        #expect(reports[0].connectable && !reports[0].isScanResponse && reports[0].rssi == -50)
        #expect(reports[1].isScanResponse && reports[1].data.bytes == hex("03 09 48 69"))
        #expect(reports[2].connectable && reports[2].address == BDAddress(value: 0xC6_5544_3322_11, type: 1))
        // Truncated reports: each dropped and counted as a malformed HCI event.
        #expect(c.host.droppedInput == 0)
        c.events.removeAll()
        c.feed(event: meta(hex("02 01 00 01 01 02 03 04 05 c6 1f 02")))
        c.feed(event: meta(hex("0d 01 13 00 01")))
        #expect(c.host.droppedInput == 2)
        #expect(c.events.filter { if case .droppedInput(.hciEvent) = $0 { true } else { false } }.count == 2)
        #expect(c.reports.count == 3)
    }

    @Test func createConnectionTimesOutAndCancels() {
        var c = readyCentral()
        let started = c.host.connect(to: BDAddress(value: 1, type: 1), timeout: 5_000)
        #expect(started)
        let out = c.drain()
        #expect(out.count == 1 && ScriptedController<RecordingDelegate>.opcode(out[0]) == HCIOpcode.leCreateConnection && out[0][3] == 25)
        c.status(HCIOpcode.leCreateConnection)
        c.host.tick(now: 5_000)
        #expect(c.drain() == [hex("01 0e 20 00")])
        #expect(c.events.contains { if case .connectionFailed(0x08) = $0 { true } else { false } })
        c.complete(HCIOpcode.leCreateConnectionCancel)
        // The controller's echo of the cancel (0x02) is not reported twice.
        let failures = c.events.filter { if case .connectionFailed = $0 { true } else { false } }.count
        c.feed(event: hex("3e 13 01 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))
        #expect(c.events.filter { if case .connectionFailed = $0 { true } else { false } }.count == failures)
        #expect(c.host.isConnecting == false)
    }

    @Test func parameterUpdateRequestIsAppliedAsCentral() {
        var c = connectedCentral()
        c.l2cap(handle: 0x40, channel: 5, hex("12 05 08 00 18 00 28 00 00 00 f4 01"))
        let out = c.drain()
        #expect(ScriptedController<RecordingDelegate>.l2capPDUs(out).first?.1 == hex("13 05 02 00 00 00"))
        #expect(out.contains { ScriptedController<RecordingDelegate>.opcode($0) == HCIOpcode.leConnectionUpdate })
    }
}
