/// One advertiser seen while scanning: what its advertising data and scan
/// response said together, and its latest RSSI.
public struct ScanEntry {
    public var address = BDAddress.zero
    public var rssi: Int8 = 127
    public var connectable = false
    /// A scan response was heard: the name is as complete as the device sends it.
    public var heardScanResponse = false
    public var summary = AdvertisementSummary()
    public init() {}

    /// A new entry, out of line: `ScanTable` fills its slots and starts a device with it.
    @inline(never) static func blank() -> ScanEntry { ScanEntry() }
}
