/// Connection parameters in HCI units (interval 1.25 ms, timeout 10 ms).
public struct ConnectionParameters: Equatable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var timeout: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
    }

    /// The ranges of Core Vol 4 Part E §7.8.12 plus the rule that the supervision
    /// timeout exceeds (1 + latency) * interval_max * 2.
    public var isValid: Bool {
        guard intervalMin >= 6, intervalMax <= 3200, intervalMin <= intervalMax,
              latency <= 499, timeout >= 10, timeout <= 3200 else { return false }
        return UInt32(timeout) * 4 > (1 + UInt32(latency)) * UInt32(intervalMax)
    }
}
