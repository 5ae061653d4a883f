/// Advertisers seen in one scan, merged by address (a scan response adds to the
/// advertising data of the same address); each report updates the entry's RSSI,
/// so a filter applied after every `add` judges the latest sample. Fixed size
/// (memory and time per report bounded): when full, the entry heard least
/// recently makes room, so a device that keeps advertising is not pushed out by
/// a crowd of one-off advertisers.
public struct ScanTable {
    public static var capacity: Int { Capacity.ScanEntries<UInt8>.count }
    public internal(set) var entries: Capacity.ScanEntries<ScanEntry> = InlineArray(filling: { ScanEntry.blank() })
    public internal(set) var count = 0
    /// Report number that last touched each entry (least recently heard goes first).
    var lastHeard: Capacity.ScanEntries<UInt32> = InlineArray(repeating: 0)
    var reports: UInt32 = 0

    public init() {}

    /// Merges a report; returns the index of the device's entry.
    @discardableResult
    public mutating func add(_ report: AdvertisingReport) -> Int {
        var index = -1
        for i in 0..<count where entries[i].address == report.address {
            index = i
            break
        }
        if index < 0 {
            if count < ScanTable.capacity {
                index = count
                count += 1
            } else {
                index = 0
                for i in 1..<ScanTable.capacity where reports &- lastHeard[i] > reports &- lastHeard[index] {
                    index = i
                }
            }
            entries[index] = ScanEntry.blank()
            entries[index].address = report.address
        }
        reports &+= 1
        lastHeard[index] = reports
        entries[index].rssi = report.rssi
        if report.isScanResponse {
            entries[index].heardScanResponse = true
        } else {
            entries[index].connectable = report.connectable
        }
        report.data.withBytes { entries[index].summary.merge($0) }
        return index
    }

    public mutating func removeAll() {
        count = 0
        reports = 0
    }
}
