import CLinux
import Chipsets

/// H4 over a UART (`serial:/dev/ttyACM0[@BAUD][,flow|,noflow]`), e.g.
/// Zephyr's hci_uart or the Raspberry Pi's own radio. RTS/CTS flow control is
/// on (the H4 transport requires it, Core Vol 4 Part A §1) unless the board
/// has no such lines (`BoardUART`) or `,noflow` says so.
///
/// A chipset may change the rate after its set-up (Broadcom's Update UART Baud
/// Rate, to `targetBaud`): the port follows (`SetupLink`, `setBaud`). A
/// controller left at its fast rate by an earlier run does not answer at
/// 115200: the port is then reopened once at the other of the two rates
/// (`PortRecovery.offersPortReset`).
/// Where the board has the radio's power line (`PowerLine`, a Raspberry Pi's
/// `BT_ON`), a chip silent at both rates is power-cycled and the port opened
/// afresh at 115200; the same cycle is the recovery ladder's second rung
/// (`canResetPort`). Without one, a chip silent at both rates ends in exit 4.
final class SerialTransport: DescriptorTransport, PortRecovery, SetupLink {
    /// The rate UART chips start at, and the fast one a set-up switches to by default (the Pi's tools' rate).
    static let startBaud = 115_200
    static let defaultFastBaud = 3_000_000

    let path: String
    private(set) var baud: Int
    /// The rate a chipset that can change it is switched to: @BAUD, else the board's.
    let targetBaud: Int
    let offersRetry: Bool
    /// The other rate a retry opens at (`warnHungAfterWarmStart`).
    let retryBaud: Int
    /// Opened just after a power cycle (nothing more to try before exit 4).
    let afterPowerCycle: Bool
    /// The other rate first, then a power cycle where there is a power line.
    var offersPortReset: Bool { offersRetry || (PowerLine.found != nil && !afterPowerCycle) }
    /// The ladder's second rung is a power cycle, where there is a power line
    /// (not while the other rate is being tried: that session's silence asks for the cycle).
    var canResetPort: Bool { PowerLine.found != nil && (offersRetry || afterPowerCycle) }
    override var portRecovery: PortRecovery? { self }
    override var setupLink: SetupLink? { self }
    /// The next open power-cycles the radio first (`beginPortReset`, `warnHungAfterWarmStart`).
    nonisolated(unsafe) static var powerCycleDue = false

    /// Where to open: at `first` (@BAUD when given, else 115200), or (`retry`)
    /// at the other one of 115200 and the target.
    static func rates(first: Int, target: Int, retry: Bool) -> (open: Int, other: Int) {
        let other = first == startBaud ? target : startBaud
        return retry ? (other, first) : (first, other)
    }

    /// `baud`: @BAUD (nil: start at 115200 and go to `board.baud`); `board`: the board's rate and flow control.
    convenience init(path: String, baud: Int?, board: BoardUART, retry: Bool) throws(TransportError) {
        let first = baud ?? SerialTransport.startBaud
        let target = first == SerialTransport.startBaud ? board.baud : first
        SerialTransport.lookUpPowerLine(path)
        // One call of the designated init for both ways in.
        var (open, other) = SerialTransport.rates(first: first, target: target, retry: retry)
        var cycled = false
        if retry, SerialTransport.powerCycleDue, let line = PowerLine.found {
            // A power-cycled chip starts afresh at 115200, whatever rate it had.
            SerialTransport.powerCycleDue = false
            RecoveryLadder.stepBegins("controller not responding; power-cycling it")
            SerialTransport.powerCycle(line)
            (open, other, cycled) = (SerialTransport.startBaud, SerialTransport.startBaud, true)
        }
        try self.init(path: path, baud: open, targetBaud: target, flow: board.flow, offersRetry: !retry,
                      retryBaud: other, afterPowerCycle: cycled)
        if cycled { return }
        PowerLine.announce()
    }

    /// The board's power line looked up once, and a cycle of it: called once
    /// each, and not inlined into the open (the parts apart are smaller).
    @inline(never)
    static func lookUpPowerLine(_ path: String) {
        PowerLine.lookUp(path: path, tree: DeviceTree.current)
    }

    @inline(never)
    static func powerCycle(_ line: PowerLine) {
        if let failure = line.cycle() { Log.error(failure) }
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

    func chipsetFacts(into context: inout ChipsetContext) {
        context.uartBaud = UInt32(baud)
        context.uartTargetBaud = UInt32(targetBaud)
    }

    /// A UART carries the set-up's commands as they are: no vendor requests.
    func useVendorControl(_ on: Bool) {}

    /// A chipset changed the controller's rate (or its restart did): the port
    /// follows before anything more is sent. 0: no change asked. The bulk
    /// endpoints' wishes are USB's.
    func follow(_ wishes: SetupWishes) {
        let rate = Int(wishes.baudRate)
        guard rate > 0, rate != baud else { return }
        let (was, wasName) = (baud, description)
        if setBaud(rate) {
            Log.info("\(wasName): now at \(rate) baud (was \(was)), as the controller")
        } else {
            Log.warning("\(description): cannot set \(rate) baud; the controller will not be understood")
        }
    }

    func warnHungAfterWarmStart() {
        guard offersRetry else {
            SerialTransport.powerCycleDue = true
            Log.warning("controller at \(description) did not answer at \(retryBaud) baud nor at \(baud) (a chip left mid-download, or wedged); power-cycling it through \(PowerLine.found?.description ?? PowerLine.name) and starting afresh at \(SerialTransport.startBaud) baud")
            return
        }
        Log.warning("controller at \(description) did not answer at \(baud) baud; trying \(retryBaud) baud once (a chip a set-up switched to a faster rate keeps it until it restarts)")
    }

    func beginPortReset() -> String {
        SerialTransport.powerCycleDue = true
        return built("power-cycling it through \(PowerLine.found?.description ?? PowerLine.name)")
    }

    var portResetName: String { "a power cycle" }

    /// "serial:/dev/ttyAMA0@3000000": the port and the rate it is at.
    static func name(_ path: String, _ baud: Int) -> String { built("serial:\(path)@\(baud)") }

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

    init(path: String, baud: Int, targetBaud: Int = 0, flow: Bool = true, offersRetry: Bool = false,
         retryBaud: Int = startBaud, afterPowerCycle: Bool = false) throws(TransportError) {
        self.path = path
        self.afterPowerCycle = afterPowerCycle
        self.baud = baud
        self.targetBaud = targetBaud
        self.offersRetry = offersRetry
        self.retryBaud = retryBaud
        let description = SerialTransport.name(path, baud)
        guard let speed = SerialTransport.speed(baud) else {
            throw .unavailable("unsupported baud rate \(baud)")
        }
        let opened = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard opened >= 0 else {
            let hint: StaticString = errno == EACCES ? " (add your user to the 'dialout' group)" : ""
            throw .unavailable("cannot open \(path): \(errnoText)\(hint)")
        }
        var tio = termios()
        guard tcgetattr(opened, &tio) == 0 else {
            sysClose(opened)
            throw .unavailable("\(path) is not a serial port: \(errnoText)")
        }
        cfmakeraw(&tio)
        cfsetispeed(&tio, speed)
        cfsetospeed(&tio, speed)
        tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD)
        if flow { tio.c_cflag |= tcflag_t(CRTSCTS) } else { tio.c_cflag &= ~tcflag_t(CRTSCTS) }
        tcsetattr(opened, TCSANOW, &tio)
        tcflush(opened, TCIOFLUSH)
        super.init(fd: opened, description: description)
    }
}
