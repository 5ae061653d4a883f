// Read-only queries written outside the core, as a test or a board would add
// them: scripts/stack-check.sh compiles this file against the core's MCU build
// and fails when one of these functions needs more than a few words of stack,
// i.e. when a borrowed read copies a container instead of reading it in place
// (docs/ARCHITECTURE.md, "State in place"). A new kind of query goes here.
import BLEHost
import EightBall

public func probeLinks(_ host: borrowing Host) -> Int {
    var n = host.connectionCount
    for slot in 0..<Host.connectionCapacity where host.peer(slot: slot) != nil { n += 1 }
    return n
}

public func probeTimers(_ host: borrowing Host) -> Bool { host.nextDeadline() != nil }

public func probeLink(_ host: borrowing Host, connection: UInt16) -> Int {
    Int(host.mtu(connection: connection)) + Int(host.subscription(connection: connection, attribute: 3))
}

public func probeDatabase(_ database: borrowing GATTDatabase, handle: UInt16) -> Int {
    guard let attribute = database.attribute(handle), !attribute.dynamic else { return 0 }
    return database.staticValueLength(handle) + (database.cccdIndex(forValue: handle) ?? 0)
}

/// Flow control's query, as an application's poll asks it before it builds a notification.
public func probeRoom(_ host: borrowing Host, connection: UInt16) -> Bool {
    host.canSend(connection: connection)
}

public func probeClient(_ host: borrowing Host, connection: UInt16) -> Bool {
    host.clientCharacteristic(connection: connection, EightBallUUID.question) != nil
}

public func probeQuestion(_ ball: borrowing EightBallPeripheral, connection: UInt16) -> Int {
    ball.withQuestion(connection: connection) { $0.count }
}

/// Generic code specialised here, in another module: the case that copied
/// the whole driver (11 KB) when the host was a loadable value.
public func probeDriver<App: HostApplication & ~Copyable, Setup: ControllerSetup & ~Copyable>(
    _ driver: borrowing HostLoop<App, Setup>
) -> Bool {
    driver.host.nextDeadline() != nil && driver.host.connectionCount > 0 && driver.app.isWaitingForRoom
        && driver.nextDeadline() != nil  // the loop's own deadline: a query of a borrowed driver
}

/// A buffer read where it lies (a `ByteStore`): the outgoing packet of a
/// borrowed driver, as a board hands it to its transport.
public func probeOutgoing<App: HostApplication & ~Copyable, Setup: ControllerSetup & ~Copyable>(
    _ driver: borrowing HostLoop<App, Setup>
) -> Int {
    driver.outgoing.withBytes { $0.isEmpty ? 0 : Int($0[0]) + $0.count }
}

public func probeOutgoingSpecialised(_ driver: UnsafeMutablePointer<HostLoop<EightBallPeripheral, NoSetup>>) -> Int {
    probeOutgoing(driver.pointee)
}

public func probeDriverSpecialised(_ driver: UnsafeMutablePointer<HostLoop<EightBallPeripheral, NoSetup>>) -> Bool {
    probeDriver(driver.pointee)
}
