/// An LE enable command whose answers are tracked (LE Set Advertising Enable,
/// Core Vol 4 Part E §7.8.9; LE Set Scan Enable, §7.8.11): what the controller
/// does, what we asked last, and how many answers are still due. Shared by the
/// advertiser and the scanner.
struct EnableTracker {
    let opcode: UInt16
    /// What the controller confirmed.
    var enabled = false
    /// The value last queued, while answers are due.
    var requested: Bool? = nil
    var pending = 0

    init(opcode: UInt16) { self.opcode = opcode }

    /// What the controller will be doing once every queued command is answered.
    var target: Bool { requested ?? enabled }
    /// On, or asked to be: a stop must send a disable.
    var mayBeOn: Bool { enabled || requested == true }

    /// The enable command (its first parameter; the caller appends any other).
    mutating func command(_ enable: Bool) -> Capacity.HCIPacket {
        requested = enable
        pending += 1
        var command = Capacity.HCIPacket.command(opcode)
        command.append(enable ? 1 : 0)
        return command
    }

    enum Answer: Equatable {
        case changed(Bool)
        case unchanged
        case failed(UInt8)
    }

    /// The controller answered one enable command. Disabling what is already
    /// off answers Command Disallowed: the state is what we wanted.
    mutating func answered(_ enable: Bool, status: UInt8) -> Answer {
        pending = max(0, pending - 1)
        if pending == 0 { requested = nil }
        guard status == HCIStatus.success || (!enable && status == HCIStatus.commandDisallowed) else {
            return .failed(status)
        }
        guard enabled != enable else { return .unchanged }
        enabled = enable
        return .changed(enable)
    }

    /// The controller stopped by itself (a connection ends advertising): true when it was on.
    mutating func stoppedByController() -> Bool {
        defer { enabled = false }
        return enabled
    }

    /// After a controller reset: off, nothing due.
    mutating func reset() { self = EnableTracker(opcode: opcode) }
}
