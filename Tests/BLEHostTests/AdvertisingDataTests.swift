import Testing
@testable import BLEHost
import TestSupport

@Suite struct AdvertisingDataTests {
    static let service = BLEUUID(high: 0x8E38_140A_27BE_4090, low: 0x8955_4FC4_B569_8D1E)

    @Test func eightBallAdvertisementWithShortName() {
        let (data, scan) = Array("Kiosk".utf8).withRaw { AdvertisingData.advertisement(service: Self.service, name: $0) }
        // Flags, complete 128-bit list (little-endian), complete local name (Core Supplement Part A §1).
        #expect(data.payload.bytes == hex("02 01 06 11 07 1e 8d 69 b5 c4 4f 55 89 90 40 be 27 0a 14 38 8e 06 09 4b 69 6f 73 6b"))
        #expect(scan.payload.bytes == hex("06 09 4b 69 6f 73 6b"))
    }

    @Test func longNameIsShortenedOnUTF8Boundary() {
        // 10 bytes do not fit after flags + UUIDs (10 left, minus 2 header bytes = 8).
        let name = Array("Café-Ball".utf8)  // "é" is 2 bytes at offsets 3-4
        let (data, scan) = name.withRaw { AdvertisingData.advertisement(service: Self.service, name: $0) }
        let bytes = data.payload.bytes
        #expect(bytes.count <= 31)
        #expect(bytes[21] == 9 && bytes[22] == ADType.shortenedLocalName)
        #expect(Array(bytes[23...]) == Array("Café-Ba".utf8))
        #expect(scan.payload.bytes == [UInt8(name.count + 1), ADType.completeLocalName] + name)
        // A cut inside a multi-byte character backs up to its start.
        var ad = AdvertisingData()
        ad.addFlags(0x06)
        ad.addComplete128BitServiceUUID(Self.service)
        Array("ABCDEFGé".utf8).withRaw { _ = ad.addLocalName($0) }
        #expect(Array(ad.payload.bytes[23...]) == Array("ABCDEFG".utf8))
    }

    @Test func scanResponseNameLongerThan29IsShortened() {
        let name = [UInt8](repeating: 0x41, count: 40)
        let (_, scan) = name.withRaw { AdvertisingData.advertisement(service: Self.service, name: $0) }
        #expect(scan.payload.count == 31 && scan.payload[1] == ADType.shortenedLocalName)
    }

    func summary(_ chunks: [[UInt8]]) -> AdvertisementSummary {
        var s = AdvertisementSummary()
        for chunk in chunks { chunk.withRaw { s.merge($0) } }
        return s
    }

    @Test func parsesEveryUUIDListAndNames() {
        let s = summary([hex("02 01 06 03 03 0f 18 05 05 78 56 34 12 03 02 0a 18 11 06 1e 8d 69 b5 c4 4f 55 89 90 40 be 27 0a 14 38 8e")])
        #expect(s.hasFlags && s.flags == 0x06)
        #expect(s.hasService(BLEUUID(uuid16: 0x180F)) && s.hasService(BLEUUID(uuid16: 0x180A)))
        #expect(s.hasService(Self.service))
        #expect(s.hasService(BLEUUID(high: 0x1234_5678_0000_1000, low: 0x8000_0080_5F9B_34FB)))
        #expect(s.name.isEmpty)
    }

    @Test func scanResponseMergesAndCompleteNameWins() {
        let s = summary([hex("05 08 4b 69 6f 73"), hex("06 09 4b 69 6f 73 6b")])
        #expect(s.name.bytes == Array("Kiosk".utf8) && s.nameIsComplete)
        let t = summary([hex("06 09 4b 69 6f 73 6b"), hex("03 08 4b 69")])
        #expect(t.name.bytes == Array("Kiosk".utf8))
    }

    /// A name past 29 bytes is shortened in both packets: the scan response's
    /// longer prefix stays when the advertising data's 8 bytes come after it.
    @Test func longerShortenedNameWinsWhicheverComesLast() {
        let long = hex("06 08 4b 69 6f 73 6b"), short = hex("03 08 4b 69")
        for order in [[long, short], [short, long]] {
            let s = summary(order)
            #expect(s.name.bytes == Array("Kiosk".utf8) && !s.nameIsComplete)
        }
    }

    @Test func malformedStructures() {
        // Length past the end: truncated, what came before stays.
        let s = summary([hex("02 01 06 09 09 41 42")])
        #expect(s.truncated && s.hasFlags && s.name.isEmpty)
        // Zero length ends the data (padding).
        let p = summary([hex("02 01 06 00 05 09 41 42 43 44")])
        #expect(!p.truncated && p.name.isEmpty)
        // A 128-bit list with a partial UUID keeps the whole ones only.
        let u = summary([hex("14 07 1e 8d 69 b5 c4 4f 55 89 90 40 be 27 0a 14 38 8e 01 02 03")])
        #expect(u.serviceCount == 1)
        // Empty flags, empty name: ignored, no crash.
        let e = summary([hex("01 01 01 09")])
        #expect(!e.hasFlags && e.name.isEmpty)
        #expect(summary([[]]).serviceCount == 0)
    }

    @Test func scanTableMergesByAddress() {
        var table = ScanTable()
        let a = BDAddress(value: 0xC1_0000_0000_01, type: 1)
        let advertising = AdvertisingReport(address: a, rssi: -50, connectable: true, isScanResponse: false,
                                            data: hex("02 01 06").withRaw { FixedBytes<31>($0) })
        let response = AdvertisingReport(address: a, rssi: -52, connectable: false, isScanResponse: true,
                                         data: hex("03 09 48 69").withRaw { FixedBytes<31>($0) })
        table.add(advertising)
        let index = table.add(response)
        #expect(table.count == 1)
        #expect(table.entries[index].connectable && table.entries[index].summary.hasFlags)
        #expect(table.entries[index].summary.name.bytes == Array("Hi".utf8) && table.entries[index].rssi == -52)
        for i in 0..<40 {
            table.add(AdvertisingReport(address: BDAddress(value: UInt64(i + 10), type: 0), rssi: -40,
                                        connectable: true, isScanResponse: false, data: FixedBytes<31>()))
        }
        #expect(table.count == ScanTable.capacity)
    }

    @Test func scanTableKeepsTheLatestRSSIOfEveryReport() {
        var table = ScanTable()
        let a = BDAddress(value: 0xC1_0000_0000_01, type: 1)
        for rssi: Int8 in [-62, -70, -58, -61] {
            let index = table.add(AdvertisingReport(address: a, rssi: rssi, connectable: true, isScanResponse: false,
                                                    data: FixedBytes<31>()))
            #expect(table.entries[index].rssi == rssi)
        }
        #expect(table.count == 1)
    }

    @Test func scanTableEvictsTheAdvertiserHeardLeastRecently() {
        // Without controller duplicate filtering every advertising event is a report:
        // a device that keeps advertising must survive a crowd of one-off advertisers.
        var table = ScanTable()
        let kiosk = BDAddress(value: 0xC1_0000_0000_01, type: 1)
        func report(_ address: BDAddress, _ rssi: Int8 = -40) -> AdvertisingReport {
            AdvertisingReport(address: address, rssi: rssi, connectable: true, isScanResponse: false,
                              data: hex("03 09 48 69").withRaw { FixedBytes<31>($0) })
        }
        table.add(report(kiosk, -62))
        for i in 0..<100 {
            table.add(report(BDAddress(value: UInt64(i + 10), type: 0)))
            if i % 10 == 0 { table.add(report(kiosk, -62 + Int8(i / 10))) }
        }
        #expect(table.count == ScanTable.capacity)
        let kept = (0..<table.count).filter { table.entries[$0].address == kiosk }
        #expect(kept.count == 1)
        #expect(kept.first.map { table.entries[$0].rssi } == -53)
        #expect(kept.first.map { table.entries[$0].summary.name.bytes } == Array("Hi".utf8))
        // The 16 most recent addresses are the ones kept (kiosk + the last 15 others).
        let others = (0..<table.count).map { table.entries[$0].address.value }.filter { $0 != kiosk.value }.sorted()
        #expect(others == (95..<110).map { UInt64($0) })
        table.removeAll()
        #expect(table.count == 0)
    }
}
