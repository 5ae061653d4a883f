import CLinux

/// A link to the controller: what every transport does. Each owns how it
/// waits (poll(2) over its descriptor, or libusb's own poll): the run loop
/// calls `wait`, then `receive`, whatever the transport is; it gives the
/// transport the driver's outgoing packets one at a time; nothing it does per
/// packet allocates. What only some links can do is a capability the run loop
/// asks for, nil where the link cannot: `portRecovery` (USB, a UART),
/// `setupLink` (what a chipset's set-up needs of USB or a UART).
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
    /// Sends one H4 packet (indicator byte first), on the endpoint the set-up's
    /// wishes say (`SetupLink.follow`).
    func send(_ packet: UnsafeRawBufferPointer) throws(TransportError)
    /// Sends everything queued since the last flush.
    func flush() throws(TransportError)
    func close()
    /// Closes it to open it again at once (the recovery ladder's next rung):
    /// a USB dongle's interface is not given back to its kernel driver between
    /// the two, which would start its own set-up and race the reopen.
    func closeToReopen()
    /// Human-readable description for logs.
    var description: String { get }
    /// What it dropped or recovered from since open (status line, --metrics-file).
    var counts: TransportCounts { get }
    /// The controller brought back from outside HCI (a port reset, a power cycle); nil: none.
    var portRecovery: PortRecovery? { get }
    /// What a chipset's set-up needs of the link; nil: its commands go as they are.
    var setupLink: SetupLink? { get }
}

extension Transport {
    var canSend: Bool { true }
    var counts: TransportCounts { TransportCounts() }
    var portRecovery: PortRecovery? { nil }
    var setupLink: SetupLink? { nil }
    func closeToReopen() { close() }
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
    throw .lost("\(what): read failed: \(errnoText)")
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
            throw .lost("\(what): write failed: \(errnoText)")
        }
    }
}
