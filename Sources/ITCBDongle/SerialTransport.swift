import CLinux
import Chipsets

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

    let path: String
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
        // Every line from now on names the rate the port is at (an exit 4 after a switch, too).
        description = SerialTransport.name(path, rate)
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
        let (was, wasName) = (baud, description)
        if setBaud(rate) {
            Log.info("\(wasName): now at \(rate) baud (was \(was)), as the controller")
        } else {
            Log.warning("\(description): cannot set \(rate) baud; the controller will not be understood")
        }
    }

    override func warnHungAfterWarmStart() {
        let (other, _) = SerialTransport.rates(spec: baud, retry: true)
        Log.warning("controller at \(description) did not answer at \(baud) baud; trying \(other) baud once (a chip a set-up switched to a faster rate keeps it until it restarts)")
    }

    /// "serial:/dev/ttyAMA0@3000000": the port and the rate it is at.
    static func name(_ path: String, _ baud: Int) -> String { "serial:\(path)@\(baud)" }

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
        self.path = path
        self.baud = baud
        self.targetBaud = targetBaud
        self.offersRetry = offersRetry
        let description = SerialTransport.name(path, baud)
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
