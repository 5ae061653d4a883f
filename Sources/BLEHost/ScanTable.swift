/// One advertiser seen while scanning: what its advertising data and scan
/// response said together, and its latest RSSI.
public struct ScanEntry {
    public var address = BDAddress.zero
    public var rssi: Int8 = 127
    public var connectable = false
    public var summary = AdvertisementSummary()
    public init() {}
}

/// Advertisers seen in one scan, merged by address (a scan response adds to the
/// advertising data of the same address). Fixed size: when full, the oldest
/// entry makes room.
public struct ScanTable {
    public static let capacity = 16
    public internal(set) var entries: InlineArray<16, ScanEntry> = InlineArray(repeating: ScanEntry())
    public internal(set) var count = 0
    var next = 0

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
                index = next
                next = (next + 1) % ScanTable.capacity
            }
            entries[index] = ScanEntry()
            entries[index].address = report.address
        }
        entries[index].rssi = report.rssi
        if !report.isScanResponse { entries[index].connectable = report.connectable }
        report.data.withBytes { entries[index].summary.merge($0) }
        return index
    }

    public mutating func removeAll() {
        count = 0
        next = 0
    }
}
