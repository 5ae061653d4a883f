import CLinux
import Chipsets

/// What a transport hands the driver: whole packets (USB: each from its
/// transfer's own buffer) or H4 bytes for the driver to de-frame (UART, TCP).
enum TransportInput {
    case packet(type: UInt8, UnsafeRawBufferPointer)
    case stream(UnsafeRawBufferPointer)
}

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
    /// The controller's port can be reset (USB): the recovery ladder's second rung.
    var canResetPort: Bool { get }
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

/// The poll(2) set of a transport that waits in poll: its own descriptors,
/// then the run loop's two (the extra one, the signal pipe). Made again only
/// when the transport's descriptors change (libusb's), so a wait allocates
/// nothing; the owner frees it (`free`).
struct PollSet {
    var fds = UnsafeMutableBufferPointer<pollfd>(start: nil, count: 0)
    /// How many of `fds` are the transport's.
    var own = 0

    var isEmpty: Bool { fds.isEmpty }

    mutating func set(_ descriptors: [pollfd]) {
        free()
        fds = .allocate(capacity: descriptors.count + 2)
        own = descriptors.count
        for i in 0..<own { fds[i] = descriptors[i] }
        fds[own] = pollfd(fd: -1, events: Int16(POLLIN), revents: 0)
        fds[own + 1] = pollfd(fd: -1, events: Int16(POLLIN), revents: 0)
    }

    func free() { fds.deallocate() }

    /// Sleeps in poll until a descriptor is readable or `deadline` passes;
    /// returns the clock at the wake-up and whether one of the transport's own is ready.
    func wait(until deadline: UInt64, now: UInt64, signals: Int32, extra: Int32) throws(TransportError) -> (now: UInt64, ready: Bool) {
        fds[own].fd = extra
        fds[own + 1].fd = signals
        let n = poll(fds.baseAddress, nfds_t(fds.count), sleepMilliseconds(until: deadline, now: now))
        if n < 0, errno != EINTR { throw .lost("poll failed: \(errnoString())") }
        let woke = monotonicMilliseconds()
        guard n > 0 else { return (woke, false) }
        for i in 0..<own where fds[i].revents != 0 { return (woke, true) }
        return (woke, false)
    }
}

enum TransportError: Error, CustomStringConvertible {
    case unavailable(String)
    case lost(String)
    case unplugged(String)
    /// No matching device is plugged in (USB): may appear later.
    case notFound(String)

    var description: String {
        switch self {
        case .unavailable(let message), .lost(let message), .unplugged(let message), .notFound(let message): message
        }
    }
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

/// A transport over one file descriptor carrying H4 both ways (TCP, serial).
/// Input is read into one buffer allocated once and handed to the driver to
/// de-frame where it lies; packets sent in one pass are gathered in another
/// and go out with one write(2) per flush.
class DescriptorTransport: Transport {
    let fd: Int32
    let description: String
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
    /// A serial port may be reopened at another rate; a socket offers nothing.
    var offersPortReset: Bool { false }
    func warnHungAfterWarmStart() {}
    // Declared here so that SerialTransport's versions override them: the protocol's
    // defaults would otherwise be this class's witnesses, and a subclass's never called.
    func chipsetFacts(into context: inout ChipsetContext) {}
    func follow(baudRate: UInt32) {}

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

    func send(_ packet: UnsafeRawBufferPointer, onBulk: Bool) throws(TransportError) {
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

/// H4 over TCP: Bumble's and Android's virtual controllers (`tcp:HOST:PORT`).
final class TCPTransport: DescriptorTransport {

    init(host: String, port: UInt16) throws(TransportError) {
        let description = "tcp:\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw .unavailable("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var lastError = "no address"
        var info: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let current = info {
            let s = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if s >= 0 {
                if connect(s, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    connected = s
                    break
                }
                lastError = errnoString()
                sysClose(s)
            }
            info = current.pointee.ai_next
        }
        guard connected >= 0 else {
            throw .unavailable("cannot connect to controller at \(host):\(port): \(lastError) (is the virtual controller running?)")
        }
        super.init(fd: connected, description: description)
        // Without TCP_NODELAY, Nagle + delayed ACK add ~40 ms to every ATT round trip.
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
}

/// H4 over a UART (`serial:/dev/ttyACM0[@BAUD]`), e.g. Zephyr's hci_uart or
/// the Raspberry Pi's own radio. The UART transport requires RTS/CTS flow
/// control (Core Vol 4 Part A §1).
///
/// A chipset may change the rate after its set-up (Broadcom's Update UART Baud
/// Rate, to `targetBaud`): the port follows (`setBaud`). A controller left at
/// its fast rate by an earlier run does not answer at 115200: the port is
/// then reopened once at the other of the two rates (`offersPortReset`).
final class SerialTransport: DescriptorTransport {
    /// The rate UART chips start at, and the fast one a set-up switches to by default (the Pi's tools' rate).
    static let startBaud = 115_200
    static let defaultFastBaud = 3_000_000

    private(set) var baud: Int
    /// The rate a chipset that can change it is switched to: @BAUD, or 3,000,000 when none (or 115200) is given.
    let targetBaud: Int
    let offersRetry: Bool
    override var offersPortReset: Bool { offersRetry }

    /// The spec's rate, or (`retry`) the other one of 115200 and the target.
    static func rates(spec baud: Int, retry: Bool) -> (open: Int, target: Int) {
        let target = baud == startBaud ? defaultFastBaud : baud
        return (retry ? (baud == startBaud ? target : startBaud) : baud, target)
    }

    convenience init(path: String, spec baud: Int, retry: Bool) throws(TransportError) {
        let (open, target) = SerialTransport.rates(spec: baud, retry: retry)
        try self.init(path: path, baud: open, targetBaud: target, offersRetry: !retry)
    }

    /// The port's rate from now on (a chipset changed the controller's); false when refused.
    func setBaud(_ rate: Int) -> Bool {
        guard let speed = SerialTransport.speed(rate) else { return false }
        var tio = termios()
        guard tcgetattr(fd, &tio) == 0 else { return false }
        cfsetispeed(&tio, speed)
        cfsetospeed(&tio, speed)
        guard tcsetattr(fd, TCSANOW, &tio) == 0 else { return false }
        baud = rate
        return true
    }

    override func chipsetFacts(into context: inout ChipsetContext) {
        context.uartBaud = UInt32(baud)
        context.uartTargetBaud = UInt32(targetBaud)
    }

    /// A chipset changed the controller's rate (or its restart did): the port
    /// follows before anything more is sent. 0: no change asked.
    override func follow(baudRate wanted: UInt32) {
        let rate = Int(wanted)
        guard rate > 0, rate != baud else { return }
        let was = baud
        if setBaud(rate) {
            Log.info("\(description): now at \(rate) baud (was \(was)), as the controller")
        } else {
            Log.warning("\(description): cannot set \(rate) baud; the controller will not be understood")
        }
    }

    override func warnHungAfterWarmStart() {
        let (other, _) = SerialTransport.rates(spec: baud, retry: true)
        Log.warning("controller at \(description) did not answer at \(baud) baud; trying \(other) baud once (a chip a set-up switched to a faster rate keeps it until it restarts)")
    }

    static func speed(_ baud: Int) -> speed_t? {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115200: speed_t(B115200)
        case 230400: speed_t(B230400)
        case 460800: speed_t(B460800)
        case 921600: speed_t(B921600)
        case 1000000: speed_t(B1000000)
        case 2000000: speed_t(B2000000)
        case 3000000: speed_t(B3000000)
        default: nil
        }
    }

    init(path: String, baud: Int, targetBaud: Int = 0, offersRetry: Bool = false) throws(TransportError) {
        self.baud = baud
        self.targetBaud = targetBaud
        self.offersRetry = offersRetry
        let description = "serial:\(path)@\(baud)"
        guard let speed = SerialTransport.speed(baud) else {
            throw .unavailable("unsupported baud rate \(baud)")
        }
        let opened = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard opened >= 0 else {
            let hint = errno == EACCES ? " (add your user to the 'dialout' group)" : ""
            throw .unavailable("cannot open \(path): \(errnoString())\(hint)")
        }
        var tio = termios()
        guard tcgetattr(opened, &tio) == 0 else {
            sysClose(opened)
            throw .unavailable("\(path) is not a serial port: \(errnoString())")
        }
        cfmakeraw(&tio)
        cfsetispeed(&tio, speed)
        cfsetospeed(&tio, speed)
        tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
        tcsetattr(opened, TCSANOW, &tio)
        tcflush(opened, TCIOFLUSH)
        super.init(fd: opened, description: description)
    }
}
