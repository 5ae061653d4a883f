public struct HostConfiguration {
    public var role: Role
    /// Connections at once (as peripheral: centrals served; capped by Host.connectionCapacity).
    public var maxConnections: Int = 4
    /// Used when the controller has no public address (all zeros), or always when
    /// `forceRandomAddress` (the --address flag).
    public var staticAddress = BDAddress.staticRandom(from: 0x1234_5678_9ABC)
    public var forceRandomAddress = false
    /// Advertising interval in 0.625 ms units (100–150 ms: quick to find, cheap on air).
    public var advertisingIntervalMin: UInt16 = 160
    public var advertisingIntervalMax: UInt16 = 240
    /// What the peripheral asks of each new link (LinkTuning.swift): 15-30 ms,
    /// no latency, 4 s supervision timeout, inside Apple's Accessory Design
    /// Guidelines (interval min >= 15 ms, max >= min + 15 ms, timeout 2-6 s);
    /// nil: the central's parameters are kept.
    public var preferredParameters: ConnectionParameters? = ConnectionParameters(
        intervalMin: 12, intervalMax: 24, latency: 0, timeout: 400)
    /// A command without Command Complete/Status by then re-initialises the controller.
    public var commandTimeout: UInt64 = 3_000
    /// A controller that leaves a command unanswered is reset and brought up
    /// again; false: the host only reports it (a one-shot board ends its
    /// session instead). A hardware error is always recovered from.
    public var recoversController = true
    /// Shutdown waits this long for disconnections before resetting anyway
    /// (within the driver's stop grace, so the Reset still has time to be confirmed).
    public var shutdownGrace: UInt64 = 500
    /// A central that has no write accepted (subscribe, question) for this long (ms) is disconnected, so
    /// idle links cannot hold every slot of a kiosk (0: never).
    public var idleTimeout: UInt64 = 60_000

    public init(role: Role) { self.role = role }
}
