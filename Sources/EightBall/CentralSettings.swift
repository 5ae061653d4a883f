import BLEHost

/// Settings of the asker (docs/ARCHITECTURE.md, "The 8-Ball on the air"; CLI flags in parentheses).
public struct CentralSettings {
    /// RSSI window in dBm (--rssi-min/--rssi-max); the ITCB apps use -60…-20.
    public var rssiMin: Int8 = -60
    public var rssiMax: Int8 = -20
    /// Whether the window is judged at all: --scan without --rssi-min/--rssi-max
    /// lists every 8-Ball it hears, whatever its signal.
    public var rssiWindow = true
    /// How long one question may take as a whole (--timeout), ms: finding the
    /// 8-Ball when no link is up, connecting, the MTU exchange, discovery,
    /// subscribing, the write and the answer. It counts from the question being
    /// asked (from the controller being ready, for a question asked before).
    /// The ATT transaction timeout (30 s, Core Vol 3 Part F §3.3.3) still
    /// closes a link whose request went unanswered; this bounds the question.
    public var questionTimeout: UInt64 = 5_000
    /// How long to look for an 8-Ball when no question waits (the prompt's first
    /// scan, --scan), ms.
    public var scanTimeout: UInt64 = 5_000
    /// How long one LE Create Connection may take, ms (the question's deadline cancels it sooner).
    public var connectTimeout: UInt64 = 5_000
    /// How long a scan listens, from its start, before it connects to the 8-Ball
    /// that matched (ms; 0: at once). With --peer NAME, so that a second 8-Ball of
    /// that name is heard and the choice refused rather than guessed.
    public var settleTime: UInt64 = 0
    /// How long `finish` waits for its link to close before ending anyway, ms
    /// (a peer that went away mid-link is closed by the supervision timeout;
    /// the driver's stop resets the controller, which ends every link).
    public var closeGrace: UInt64 = 500
    /// Only this 8-Ball (--peer): by name, or by address when `peerAddress` is set.
    public var peerName = Capacity.AdvertisingPayload()
    public var peerAddress: UInt64? = nil
    /// Scan-only mode: report every 8-Ball in range, connect to none.
    public var listOnly = false

    public init() {}
}
