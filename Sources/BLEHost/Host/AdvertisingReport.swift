/// One advertising report (legacy 0x02 or extended 0x0D), payload copied.
public struct AdvertisingReport {
    public var address: BDAddress
    public var rssi: Int8
    /// Event type bits: connectable / scannable / scan response.
    public var connectable: Bool
    public var isScanResponse: Bool
    public var data: Capacity.AdvertisingPayload

    /// An empty report (the filler of the report ring).
    public init() {
        self.init(address: .zero, rssi: 127, connectable: false, isScanResponse: false, data: FixedBytes())
    }

    public init(address: BDAddress, rssi: Int8, connectable: Bool, isScanResponse: Bool, data: Capacity.AdvertisingPayload) {
        self.address = address
        self.rssi = rssi
        self.connectable = connectable
        self.isScanResponse = isScanResponse
        self.data = data
    }
}
