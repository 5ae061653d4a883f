import CLinux

/// A transport over one file descriptor carrying H4 both ways (TCP, serial).
/// Input is read into one buffer allocated once and handed to the driver to
/// de-frame where it lies; packets sent in one pass are gathered in another
/// and go out with one write(2) per flush.
class DescriptorTransport: Transport {
    let fd: Int32
    /// Its name in logs (a serial port's says the rate it is at now).
    var description: String
    /// Incoming bytes: one read's worth.
    let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
    /// Outgoing bytes of this pass: room for a full transmit queue of largest ACL packets.
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 32 * 1024, alignment: 8)
    var pending = 0

    init(fd: Int32, description: String) {
        self.fd = fd
        self.description = description
    }

    deinit {
        input.deallocate()
        output.deallocate()
        pollSet.free()
    }

    /// The descriptor and the run loop's two, in poll(2); whether the last wait found input.
    var pollSet = PollSet()
    var readable = false
    /// A socket has neither; a serial port both. Declared here so that
    /// SerialTransport's override them: the protocol's defaults would otherwise
    /// be this class's witnesses, and a subclass's never asked.
    var portRecovery: PortRecovery? { nil }
    var setupLink: SetupLink? { nil }

    final func wait(until deadline: UInt64, now: UInt64, signals: Int32, extra: Int32) throws(TransportError) -> UInt64 {
        if pollSet.isEmpty { pollSet.set([pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]) }
        let woke = try pollSet.wait(until: deadline, now: now, signals: signals, extra: extra)
        readable = woke.ready
        return woke.now
    }

    final func receive(_ deliver: (TransportInput) -> Void) throws(TransportError) {
        guard readable else { return }
        readable = false
        while true {
            let count = try readDescriptor(fd, into: input, what: description)
            if count > 0 { deliver(.stream(UnsafeRawBufferPointer(rebasing: input[0..<count]))) }
            if count < input.count { return }
        }
    }

    func send(_ packet: UnsafeRawBufferPointer) throws(TransportError) {
        if pending + packet.count > output.count { try flush() }
        guard packet.count <= output.count else { return try writeDescriptor(fd, packet, what: description) }
        (output.baseAddress! + pending).copyMemory(from: packet.baseAddress!, byteCount: packet.count)
        pending += packet.count
    }

    func flush() throws(TransportError) {
        guard pending > 0 else { return }
        let count = pending
        pending = 0
        try writeDescriptor(fd, UnsafeRawBufferPointer(rebasing: output[0..<count]), what: description)
    }

    func close() { sysClose(fd) }
}
