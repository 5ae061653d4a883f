import BLEHost

/// The role's logic as the run loop holds it: one type for the three roles
/// (the 8-Ball peripheral, the central, --controller-info), so that the loop
/// and the host's generic code under it (`RunLoop`, `HostLoop`, `Host.handleATT`,
/// `ATTServer`, the GATT client's paths) are compiled once in the shipped
/// binary, not once per role (issue 42: about 50 KB of the x86_64 binary).
/// Each requirement is a `switch` over the role, which calls that role's own
/// implementation (its defaults included), so every role behaves as before.
///
/// The role's state lives in one heap block of its own, allocated when the
/// session begins and freed with the loop; calls reach it by address. Held in
/// place instead (an enum payload, an Optional), a non-mutating requirement
/// (`nextDeadline`, `isWaitingForRoom`: every wake-up) borrowed the payload as
/// a copy of the whole role (5 KB for the peripheral, 9 KB for the central),
/// and a mutating one through an enum moved it out and back.
struct RoleDispatch: RoleLogic, ~Copyable {
    enum Role {
        case peripheral(UnsafeMutablePointer<PeripheralLogic>)
        case central(UnsafeMutablePointer<CentralLogic>)
        case info(UnsafeMutablePointer<InfoLogic>)
    }
    let role: Role

    init(_ logic: consuming PeripheralLogic) { role = .peripheral(newBlock(holding: logic)) }
    init(_ logic: consuming CentralLogic) { role = .central(newBlock(holding: logic)) }
    init(_ logic: consuming InfoLogic) { role = .info(newBlock(holding: logic)) }

    deinit {
        switch role {
        case .peripheral(let logic): freeBlock(logic)
        case .central(let logic): freeBlock(logic)
        case .info(let logic): freeBlock(logic)
        }
    }

    /// The central's logic, for what its session reads after the loop.
    var central: CentralLogic {
        unsafeAddress {
            guard case .central(let logic) = role else { fatalError("not the central's loop") }
            return UnsafePointer(logic)
        }
    }

    // MARK: - GATTServerDelegate

    mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout Capacity.AttributeValue) -> UInt8 {
        switch role {
        case .peripheral(let logic): logic.pointee.serverRead(connection: connection, attribute: attribute, into: &value)
        case .central(let logic): logic.pointee.serverRead(connection: connection, attribute: attribute, into: &value)
        case .info(let logic): logic.pointee.serverRead(connection: connection, attribute: attribute, into: &value)
        }
    }

    mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        switch role {
        case .peripheral(let logic): logic.pointee.serverWrite(connection: connection, attribute: attribute, value: value)
        case .central(let logic): logic.pointee.serverWrite(connection: connection, attribute: attribute, value: value)
        case .info(let logic): logic.pointee.serverWrite(connection: connection, attribute: attribute, value: value)
        }
    }

    mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16) {
        switch role {
        case .peripheral(let logic): logic.pointee.serverSubscriptionChanged(connection: connection, attribute: attribute, value: value)
        case .central(let logic): logic.pointee.serverSubscriptionChanged(connection: connection, attribute: attribute, value: value)
        case .info(let logic): logic.pointee.serverSubscriptionChanged(connection: connection, attribute: attribute, value: value)
        }
    }

    // MARK: - GATTClientDelegate

    mutating func clientNotification(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {
        switch role {
        case .peripheral(let logic): logic.pointee.clientNotification(connection: connection, attribute: attribute, value: value)
        case .central(let logic): logic.pointee.clientNotification(connection: connection, attribute: attribute, value: value)
        case .info(let logic): logic.pointee.clientNotification(connection: connection, attribute: attribute, value: value)
        }
    }

    mutating func clientIndication(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {
        switch role {
        case .peripheral(let logic): logic.pointee.clientIndication(connection: connection, attribute: attribute, value: value)
        case .central(let logic): logic.pointee.clientIndication(connection: connection, attribute: attribute, value: value)
        case .info(let logic): logic.pointee.clientIndication(connection: connection, attribute: attribute, value: value)
        }
    }

    // MARK: - HostApplication

    @inline(never)
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        switch role {
        case .peripheral(let logic): logic.pointee.handle(event, host: &host, now: now)
        case .central(let logic): logic.pointee.handle(event, host: &host, now: now)
        case .info(let logic): logic.pointee.handle(event, host: &host, now: now)
        }
    }

    /// Out of line: `HostLoop.processEvents` polls at two places (once per pass).
    @inline(never)
    mutating func poll(host: inout Host, now: UInt64) {
        switch role {
        case .peripheral(let logic): logic.pointee.poll(host: &host, now: now)
        case .central(let logic): logic.pointee.poll(host: &host, now: now)
        case .info(let logic): logic.pointee.poll(host: &host, now: now)
        }
    }

    @inline(__always)
    func nextDeadline() -> UInt64? {
        switch role {
        case .peripheral(let logic): logic.pointee.nextDeadline()
        case .central(let logic): logic.pointee.nextDeadline()
        case .info(let logic): logic.pointee.nextDeadline()
        }
    }

    @inline(__always)
    var isWaitingForRoom: Bool {
        switch role {
        case .peripheral(let logic): logic.pointee.isWaitingForRoom
        case .central(let logic): logic.pointee.isWaitingForRoom
        case .info(let logic): logic.pointee.isWaitingForRoom
        }
    }

    @inline(__always)
    var isFinished: Bool {
        switch role {
        case .peripheral(let logic): logic.pointee.isFinished
        case .central(let logic): logic.pointee.isFinished
        case .info(let logic): logic.pointee.isFinished
        }
    }

    // MARK: - RoleLogic

    var exitCode: Int32? {
        switch role {
        case .peripheral(let logic): logic.pointee.exitCode
        case .central(let logic): logic.pointee.exitCode
        case .info(let logic): logic.pointee.exitCode
        }
    }

    mutating func appendStatusDetail(to status: inout BuiltText.Builder) {
        switch role {
        case .peripheral(let logic): logic.pointee.appendStatusDetail(to: &status)
        case .central(let logic): logic.pointee.appendStatusDetail(to: &status)
        case .info(let logic): logic.pointee.appendStatusDetail(to: &status)
        }
    }

    mutating func addCounts(to counts: inout MetricCounts) {
        switch role {
        case .peripheral(let logic): logic.pointee.addCounts(to: &counts)
        case .central(let logic): logic.pointee.addCounts(to: &counts)
        case .info(let logic): logic.pointee.addCounts(to: &counts)
        }
    }
}

/// A role's state in a heap block of its own (once per session).
private func newBlock<Logic: ~Copyable>(holding logic: consuming Logic) -> UnsafeMutablePointer<Logic> {
    let block = UnsafeMutablePointer<Logic>.allocate(capacity: 1)
    block.initialize(to: logic)
    return block
}

private func freeBlock<Logic: ~Copyable>(_ block: UnsafeMutablePointer<Logic>) {
    block.deinitialize(count: 1)
    block.deallocate()
}
