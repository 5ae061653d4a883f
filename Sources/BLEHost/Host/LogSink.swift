/// Where a log line is written: a fixed line buffer on Linux, the UART on the
/// MCU. The names of commands, statuses, companies and Core versions are
/// hooks: the Linux board knows their names, the firmware prints the codes.
/// How many bytes come before the NUL at or after `start`.
@inlinable
public func terminatedCount(_ start: UnsafePointer<UInt8>) -> Int {
    var end = start
    while end.pointee != 0 { end += 1 }
    return end - start
}

public protocol LogSink: ~Copyable {
    /// The bytes before the NUL that ends a literal (`text` passes its start).
    mutating func terminated(_ start: UnsafePointer<UInt8>)
    mutating func decimal(_ value: Int)
    /// "0x" and lower-case hex digits without padding (handles, attributes).
    mutating func hex(_ value: UInt16)
    /// Two upper-case hex digits (status and error codes).
    mutating func byte(_ value: UInt8)
    /// "AA:BB:CC:DD:EE:FF", most significant byte first.
    mutating func address(_ address: BDAddress)
    mutating func commandName(_ opcode: UInt16)
    mutating func companyName(_ identifier: UInt16)
    mutating func coreVersion(_ version: UInt8)
    /// An HCI status or disconnection reason.
    mutating func statusName(_ status: UInt8)
}

extension LogSink where Self: ~Copyable {
    /// A literal. Swift lays string literals out NUL-terminated, so each use
    /// passes one pointer rather than StaticString's three words.
    @inline(__always)
    public mutating func text(_ literal: StaticString) { terminated(literal.utf8Start) }

    public mutating func commandName(_ opcode: UInt16) {
        text("command ")
        hex(opcode)
    }

    public mutating func companyName(_ identifier: UInt16) {
        text("company ")
        hex(identifier)
    }

    public mutating func coreVersion(_ version: UInt8) {
        text("HCI version ")
        decimal(Int(version))
    }

    public mutating func statusName(_ status: UInt8) {
        text("status 0x")
        byte(status)
    }

    /// " (and 3 more <what> without a line; at most one line a minute)" after a rate-limited line.
    public mutating func moreSince(_ unreported: Int, _ what: StaticString) {
        guard unreported > 0 else { return }
        text(" (and ")
        decimal(unreported)
        text(" more ")
        text(what)
        text(" without a line; at most one line a minute)")
    }

    /// An LE PHY: "1M", "2M", "Coded".
    public mutating func phy(_ value: UInt8) {
        switch value {
        case 1: text("1M")
        case 2: text("2M")
        case 3: text("Coded")
        default:
            text("PHY 0x")
            byte(value)
        }
    }

    /// A connection interval (1.25 ms units) in ms: "7.5", "30.0", "8.75".
    public mutating func interval(_ units: UInt16) {
        let hundredths = Int(units) * 125
        decimal(hundredths / 100)
        text(".")
        let fraction = hundredths % 100
        if fraction % 10 == 0 {
            decimal(fraction / 10)
        } else {
            if fraction < 10 { text("0") }
            decimal(fraction)
        }
    }
}
