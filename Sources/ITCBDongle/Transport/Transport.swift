import CLinux
import Chipsets

/// A link to the controller. Each transport owns how it waits (poll(2) over
/// its descriptor, or libusb's own poll): the run loop calls `wait`, then
/// `receive`, whatever the transport is; it gives the transport the driver's
/// outgoing packets one at a time; nothing it does per packet allocates.
protocol Transport: AnyObject {
    /// Sleeps until the transport has input, the signal pipe `signals` or
    /// `extra` (the central's stdin; -1 for none) is readable, or `deadline`
    /// passes (monotonic ms, `UInt64.max` for none). `now` is the clock as the
    /// caller last read it; returns the clock read at the wake-up.
    func wait(until deadline: UInt64, now: UInt64, signals: Int32, extra: Int32) throws(TransportError) -> UInt64
    /// Hands every packet or byte run that arrived by the last `wait` to
    /// `deliver`, or throws when the link is gone.
    func receive(_ deliver: (TransportInput) -> Void) throws(TransportError)
    /// Room for one more packet now (else it stays with the host until a later pass).
    var canSend: Bool { get }
    /// Sends one H4 packet (indicator byte first). `onBulk`: a command that goes
    /// on USB's bulk OUT endpoint (an Intel boot loader's Secure Send).
    func send(_ packet: UnsafeRawBufferPointer, onBulk: Bool) throws(TransportError)
    /// Sends everything queued since the last flush.
    func flush() throws(TransportError)
    func close()
    /// Human-readable description for logs.
    var description: String { get }
    /// USB opened without a port reset: one can still be tried when the
    /// controller does not answer HCI Reset (a dongle that hangs after a warm start).
    var offersPortReset: Bool { get }
    /// Said once before the port reset and retry.
    func warnHungAfterWarmStart()
    /// The controller's port can be reset (USB), or its power cycled (a
    /// Raspberry Pi's UART radio): the recovery ladder's second rung.
    var canResetPort: Bool { get }
    /// That rung begins: what it does, for the log ("resetting its USB port").
    func beginPortReset() -> String
    /// That rung, named ("a USB port reset").
    var portResetName: String { get }
    /// Packets the transport dropped before the driver (cut short, oversize).
    var droppedPackets: Int { get }
    /// Stalled and babbling transfers since open (USB; --metrics-file).
    var stalls: Int { get }
    var babbledTransfers: Int { get }
    /// What the chipsets see of this link (USB IDs, UART rates).
    func chipsetFacts(into context: inout ChipsetContext)
    /// The chipset's set-up speaks USB vendor control requests (`USBVendorControl`).
    func useVendorControl(_ on: Bool)
    /// The set-up's answers come as events on bulk IN (an Intel boot loader).
    func carryEventsOnBulk(_ on: Bool)
    /// The controller's rate changed (a chipset's set-up): the port follows. 0: no change asked.
    func follow(baudRate: UInt32)
}

extension Transport {
    var offersPortReset: Bool { false }
    var canResetPort: Bool { false }
    var canSend: Bool { true }
    var droppedPackets: Int { 0 }
    var stalls: Int { 0 }
    var babbledTransfers: Int { 0 }
    func chipsetFacts(into context: inout ChipsetContext) {}
    func useVendorControl(_ on: Bool) {}
    func carryEventsOnBulk(_ on: Bool) {}
    func follow(baudRate: UInt32) {}
    func beginPortReset() -> String { "resetting its USB port" }
    var portResetName: String { "a USB port reset" }

    /// Said once before the port reset and retry (bring-up and vendor set-up alike).
    func warnHungAfterWarmStart() {
        Log.warning("controller at \(description) did not answer HCI Reset (a dongle that hangs after a warm start?); resetting its USB port and trying once more")
    }
}

/// How long to sleep until `deadline` (ms, capped at a minute), -1 for no deadline.
func sleepMilliseconds(until deadline: UInt64, now: UInt64) -> Int32 {
    if deadline == UInt64.max { return -1 }
    return deadline <= now ? 0 : Int32(min(deadline - now, 60_000))
}

/// Reads what a non-blocking descriptor has into `buffer`; throws on EOF or a hard error.
func readDescriptor(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, what: String) throws(TransportError) -> Int {
    let n = sysRead(fd, buffer.baseAddress, buffer.count)
    if n > 0 { return n }
    if n == 0 { throw .lost("\(what): the controller closed the connection") }
    if errno == EAGAIN || errno == EINTR { return 0 }
    throw .lost("\(what): read failed: \(errnoString())")
}

/// Writes all bytes to a descriptor, waiting with poll when it is full.
func writeDescriptor(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, what: String) throws(TransportError) {
    var offset = 0
    while offset < bytes.count {
        let n = sysWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n > 0 {
            offset += n
        } else if n < 0, errno == EAGAIN || errno == EINTR {
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&p, 1, 1000)
        } else {
            throw .lost("\(what): write failed: \(errnoString())")
        }
    }
}
