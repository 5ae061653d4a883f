import BLEHost

/// Settings of the asker (docs/ARCHITECTURE.md, "The 8-Ball on the air"; CLI flags in parentheses).
public struct CentralSettings {
    /// RSSI window in dBm (--rssi-min/--rssi-max); the ITCB apps use -60…-20.
    public var rssiMin: Int8 = -60
    public var rssiMax: Int8 = -20
    /// How long to wait for the answer notification (--timeout), ms.
    public var answerTimeout: UInt64 = 5_000
    /// How long to look for an 8-Ball before giving up, ms.
    public var scanTimeout: UInt64 = 5_000
    /// How long one LE Create Connection may take, ms.
    public var connectTimeout: UInt64 = 5_000
    /// Only this 8-Ball (--peer): by name, or by address when `peerAddress` is set.
    public var peerName = FixedBytes<31>()
    public var peerAddress: UInt64? = nil
    /// Scan-only mode: report every 8-Ball in range, connect to none.
    public var listOnly = false

    public init() {}
}
