/// Construction in place, for firmware: `Host(configuration:database:)`
/// builds the whole ~40 KB value in a stack temporary before it is copied to
/// its home, which no small MCU's stack survives. These build the same state
/// field by field in memory that is already the value's home (a static arena
/// in .bss): every frame stays small. The memory may hold anything beforehand
/// (zeros, a previous host): every type here is plain data without references,
/// so writing a field never reads the old one, and nothing is read that was
/// not written first (queues and tables are emptied by their counts).
/// `InPlaceTests` proves the result behaves exactly like a host made by `init`.
extension Host {
    /// Makes the memory at `pointer` a freshly initialised host (state `.off`,
    /// empty database: fill it with `buildDatabase`, then `start`).
    public static func initialize(_ pointer: UnsafeMutablePointer<Host>, configuration: HostConfiguration) {
        pointer.pointee.resetInPlace(configuration: configuration)
    }

    /// Adds attributes to the (empty) database before `start`.
    public mutating func buildDatabase(_ body: (inout GATTDatabase) -> Void) {
        body(&server.database)
    }

    mutating func resetInPlace(configuration: HostConfiguration) {
        self.configuration = configuration
        self.configuration.maxConnections = max(1, min(configuration.maxConnections, Host.connectionCapacity))
        controller = ControllerInfo()
        server.database.removeAll()
        for i in 0..<Host.connectionCapacity { release(i) }
        now = 0
        commandQueue.removeAll()
        commandCredits = 1
        outstandingOpcode = nil
        outstandingParameter = 0
        commandDeadline = 0
        earlyACL.removeAll()
        linkAppeared = false
        aclCredits = 0
        aclQueue.removeAll()
        mayOwe = false
        signalingIdentifier = 0
        unansweredOptional = false
        owedCursor = 0
        transmitRoomFreed = false
        outputDropLine = RepeatedLine()
        events.removeAll()
        reports.removeAll()
        advertisingReport = AdvertisingReport()
        eventLossQueued = false
        state = .off
        initStep = .reset
        advertiser = Advertiser()
        scanner = Scanner()
        shutdownStarted = 0
        shutdownResetQueued = false
        recoveries = 0
        droppedInput = 0
        droppedOutput = 0
        counts = HostCounts()
    }
}

/// Zero bytes that make the type holding them address-only: such a value always
/// lives in memory and is handed to every function by address, so a read of a
/// borrowed container (a query, an accessor, generic code specialised in
/// another module) subscripts its arrays where they lie and never loads the
/// container whole into a stack copy. Every big ~Copyable container holds one
/// (`let pin = InPlacePin()`), in place of `@_addressableSelf` on its queries
/// (docs/ARCHITECTURE.md, "State in place"). Needs the RawLayout feature.
@frozen @_rawLayout(size: 0, alignment: 1)
public struct InPlacePin: ~Copyable {
    @inlinable public init() {}
    @inlinable deinit {}
}
