/// Construction in place, for firmware: `Host(configuration:database:)`
/// returns a ~40 KB value, and `pointer.initialize(to: Host(...))` builds it in
/// a stack temporary before copying it home, which no small MCU's stack
/// survives. `initialize` re-initialises with that same `init` (no list of
/// fields to keep), but hands it the home as an `inout` (known to the
/// optimiser as memory of the host's size): the value is then written where
/// it lives. The memory may hold anything beforehand (zeros, a previous host):
/// every type here is plain data without references, so nothing of the old
/// value is read or released. `scripts/stack-check.sh` holds `build`'s
/// frame to the limit of every function (a copy of the host would be
/// kilobytes); `InPlaceTests` proves the result behaves like `init`'s.
extension Host {
    /// Makes the memory at `pointer` a freshly initialised host (state `.off`,
    /// empty database: fill it with `buildDatabase`, then `start`).
    public static func initialize(_ pointer: UnsafeMutablePointer<Host>, configuration: HostConfiguration) {
        build(&pointer.pointee, configuration)
    }

    /// Not inlined: the `inout` is what tells the optimiser that `home` is a
    /// whole host's memory, so `init` may write into it directly.
    @inline(never) static func build(_ home: inout Host, _ configuration: HostConfiguration) {
        withUnsafeMutablePointer(to: &home) { $0.initialize(to: Host(configuration: configuration, database: GATTDatabase())) }
    }

    /// Adds attributes to the (empty) database before `start`.
    public mutating func buildDatabase(_ body: (inout GATTDatabase) -> Void) {
        body(&server.database)
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
