// The 8-Ball as bare-metal firmware: the same sans-IO core as the Linux binary
// (Sources/BLEHost, Sources/EightBall, built with -D ITCB_FIRMWARE) and the same
// loop body, the core's HostLoop, run by a polled main loop. The board
// (Firmware/board/board.h) gives time, the H4 UART, idle, the log and the
// static home of the state; nothing here allocates.
//
// All state lives in .bss, built in place once (HostLoop.initialize with
// Host.initialize and EightBallPeripheral.initialize): no global initialisers,
// no big temporaries. The loop reaches the driver only through a pointer with
// mutating calls: a borrowed call on this non-copyable value from this module
// would copy it onto the stack.
import BLEHost
import EightBall

// MARK: - The board (Firmware/board/board.h)

@_extern(c, "board_millis") func boardMillis() -> UInt64
@_extern(c, "board_h4_peek") func boardH4Peek(_ bytes: UnsafeMutablePointer<UnsafePointer<UInt8>?>) -> Int
@_extern(c, "board_h4_consume") func boardH4Consume(_ count: Int)
@_extern(c, "board_h4_write") func boardH4Write(_ bytes: UnsafeRawPointer?, _ count: Int)
@_extern(c, "board_idle") func boardIdle()
@_extern(c, "board_log") func boardLog(_ text: UnsafeRawPointer?, _ count: Int)
@_extern(c, "board_log_dec") func boardLogDec(_ value: UInt32)
@_extern(c, "board_log_dec64") func boardLogDec64(_ value: UInt64)
@_extern(c, "board_log_hex") func boardLogHex(_ value: UInt32, _ digits: UInt32)
@_extern(c, "board_driver_storage") func boardDriverStorage(_ size: Int, _ alignment: Int) -> UnsafeMutableRawPointer
@_extern(c, "board_stack_peak") func boardStackPeak() -> UInt32
@_extern(c, "board_stack_size") func boardStackSize() -> UInt32
@_extern(c, "board_stack_mark") func boardStackMark() -> UInt32
@_extern(c, "board_stack_intact") func boardStackIntact() -> Int32
@_extern(c, "board_rx_bytes") func boardRxBytes() -> UInt32
@_extern(c, "board_tx_bytes") func boardTxBytes() -> UInt32
@_extern(c, "board_rx_stalls") func boardRxStalls() -> UInt32
@_extern(c, "board_idle_permille") func boardIdlePermille() -> UInt32

// MARK: - Log (UART1)

enum Log {
    static func text(_ s: StaticString) { boardLog(s.utf8Start, s.utf8CodeUnitCount) }
    static func dec(_ value: Int) {
        if value < 0 { text("-") }
        boardLogDec(UInt32(truncatingIfNeeded: value.magnitude))
    }
    // (64-bit division in Swift pulls array code into an Embedded build: C prints it.)
    static func dec(_ value: UInt64) { boardLogDec64(value) }
    static func hex(_ value: UInt32, digits: UInt32) { boardLogHex(value, digits) }
    /// Upper-case hex digits, as the Linux log prints status codes.
    static func upperHex(_ value: UInt32, digits: UInt32) {
        var shift = Int(digits) * 4
        var byte: UInt8 = 0
        while shift > 0 {
            shift -= 4
            let digit = UInt8((value >> UInt32(shift)) & 0xF)
            byte = digit < 10 ? 48 + digit : 55 + digit
            withUnsafeBytes(of: &byte) { boardLog($0.baseAddress, 1) }
        }
    }
    static func line(_ s: StaticString) { text(s); text("\n") }
    static func line(_ s: StaticString, _ value: Int) { text(s); dec(value); text("\n") }

    static func address(_ address: BDAddress) {
        for i in 0..<6 {
            if i > 0 { text(":") }
            upperHex(UInt32(address.printedByte(i)), digits: 2)
        }
    }

    /// Bytes from the air, printable ASCII kept, the rest as '.', at most `limit`.
    static func quoted(_ bytes: UnsafeRawBufferPointer, limit: Int = 64) {
        text("\"")
        var byte: UInt8 = 0
        for i in 0..<min(bytes.count, limit) {
            byte = bytes[i] >= 0x20 && bytes[i] < 0x7F ? bytes[i] : 0x2E
            withUnsafeBytes(of: &byte) { boardLog($0.baseAddress, 1) }
        }
        text(bytes.count > limit ? "\"..." : "\"")
    }
}

// MARK: - The firmware

typealias Driver = HostLoop<EightBallPeripheral, NoSetup>

/// The board's ears on the driver: the host's events as log lines, counted.
struct FirmwareObserver: HostLoopObserver {
    var connections = 0
    var framingResets = 0
    /// Set on a disconnection: the main loop prints the status line.
    var statusDue = false

    /// Every event at info level or above, in the core's words (the Linux board's too).
    /// In a frame of its own: inlined, the line's formatting would grow the frame of the driver's event loop.
    @inline(never)
    mutating func observe(_ event: HostEvent, host: borrowing Host) {
        switch event {
        case .connected: connections += 1
        case .disconnected: statusDue = true
        default: break
        }
        guard event.severity <= .info else { return }
        var line = UARTLine()
        line.text("host: ")
        event.describe(into: &line, host: host)
        line.text("\n")
    }

    mutating func framingLost(_ why: FramingLoss) {
        framingResets += 1
        Log.text("h4: framing lost (")
        switch why {
        case .notHCI: Log.text("bytes that are not HCI")
        case .stalled: Log.text("a packet began and never finished")
        }
        Log.line("); resetting the controller")
    }
}

/// A log line written to the UART as it is built (names are printed as codes).
struct UARTLine: LogSink {
    mutating func terminated(_ start: UnsafePointer<UInt8>) { boardLog(start, terminatedCount(start)) }
    mutating func decimal(_ value: Int) { Log.dec(value) }
    mutating func byte(_ value: UInt8) { Log.upperHex(UInt32(value), digits: 2) }
    mutating func address(_ address: BDAddress) { Log.address(address) }

    mutating func hex(_ value: UInt16) {
        var digits: UInt32 = 1
        while digits < 4, value >> (4 * digits) != 0 { digits += 1 }
        Log.text("0x")
        Log.hex(UInt32(value), digits: digits)
    }
}

/// The main loop's own state: the driver's static home, the observer and a
/// few counters. A handful of words in fw_main's frame.
struct Firmware {
    let driver: UnsafeMutablePointer<Driver>
    var observer = FirmwareObserver()
    /// The driver's next deadline (`.max`: none), asked after the pass's
    /// sends; 0 before the first pass: every timer is checked.
    var deadline: UInt64 = 0
    var answers = 0
    var rejected = 0

    /// Builds the driver, the host and the 8-Ball in their static home, piece by piece.
    @inline(never)
    static func boot() -> Firmware {
        let driver = boardDriverStorage(MemoryLayout<Driver>.size, MemoryLayout<Driver>.alignment)
            .assumingMemoryBound(to: Driver.self)
        var settings = HostLoopSettings()
        settings.readyTimeout = nil  // firmware keeps trying; the host re-initialises a silent controller
        Driver.initialize(driver, setup: NoSetup(), settings: settings, host: { host in
            var configuration = HostConfiguration(role: .peripheral)
            configuration.maxConnections = 1
            configuration.staticAddress = BDAddress.staticRandom(from: FirmwareConfig.address)
            configuration.forceRandomAddress = true
            Host.initialize(host, configuration: configuration)
        }, app: { logic, host in
            host.buildDatabase { database in
                EightBallPeripheral.initialize(
                    logic, name: UnsafeRawBufferPointer(start: FirmwareConfig.name.utf8Start, count: FirmwareConfig.name.utf8CodeUnitCount),
                    style: FirmwareConfig.answers, seed: FirmwareConfig.seed, database: &database)
            }
        })
        return Firmware(driver: driver)
    }

    // The loop's own frame stays small: everything that builds packets or events
    // (start, feed, service) runs in a frame of its own, below it.
    @inline(never)
    mutating func run() -> Never {
        start()
        service(now: boardMillis())
        let boot = boardStackMark()
        Log.line("fw: boot stack peak ", Int(boot))
        while true {
            var busy = feed()
            let now = boardMillis()
            if now >= deadline { busy = true }
            if busy { service(now: now) } else { boardIdle() }
        }
    }

    @inline(never)
    func start() { driver.pointee.start(now: boardMillis()) }

    /// Timers, events to the 8-Ball, packets to the controller, the next timer.
    @inline(never)
    mutating func service(now: UInt64) {
        driver.pointee.service(now: now, waitedUntil: deadline, observer: &observer)
        logEightBall()
        while driver.pointee.nextOutgoing() {
            driver.pointee.outgoing.withBytes { boardH4Write($0.baseAddress, $0.count) }
        }
        deadline = driver.pointee.nextDeadline() ?? UInt64.max
        if observer.statusDue {
            observer.statusDue = false
            status()
        }
    }

    /// Hands one contiguous stretch of what the UART received to the driver,
    /// which handles each whole packet where it lies and keeps a split one in
    /// its de-framer; then the stretch is free for new input. What the packets
    /// caused is sent (service) before more input is taken. True when there was input.
    @inline(never)
    mutating func feed() -> Bool {
        var start: UnsafePointer<UInt8>? = nil
        let count = boardH4Peek(&start)
        guard count > 0, let start else { return false }
        driver.pointee.receive(stream: UnsafeRawBufferPointer(start: start, count: count), now: boardMillis(), observer: &observer)
        boardH4Consume(count)
        return true
    }

    /// The 8-Ball's own events, as log lines.
    @inline(never)
    mutating func logEightBall() {
        while let event = driver.pointee.app.nextEvent() { log(event) }
    }

    @inline(never)
    mutating func log(_ event: EightBallEvent) {
        switch event {
        case .questionAccepted(let connection):
            Log.text("8ball: question ")
            driver.pointee.app.withQuestion(connection: connection) { question in
                Log.quoted(question)
                Log.text(" (")
                Log.dec(question.count)
            }
            Log.line(" bytes)")
        case .questionRejected(_, let length):
            rejected += 1
            Log.line("8ball: not a question (ATT error 0x0E), bytes ", length)
        case .answered(_, let answer):
            answers += 1
            Log.text("8ball: answer ")
            Log.dec(answer)
            Log.line(" notified, answers ", answers)
            if answers % 10 == 0 { status() }
        case .answerWaitingForSubscription:
            Log.line("8ball: answer waits for the central to subscribe")
        }
    }

    /// One line the test suite reads: the stack high-water mark and counters.
    func status() {
        Log.text("status: stack peak ")
        Log.dec(Int(boardStackPeak()))
        Log.text(" of ")
        Log.dec(Int(boardStackSize()))
        Log.text(" B")
        if boardStackIntact() == 0 { Log.text(" (OVERFLOWED)") }
        Log.text(", answers ")
        Log.dec(answers)
        Log.text(", rejected ")
        Log.dec(rejected)
        Log.text(", connections ")
        Log.dec(observer.connections)
        Log.text(", rx ")
        Log.dec(Int(boardRxBytes()))
        Log.text(" B, tx ")
        Log.dec(Int(boardTxBytes()))
        Log.text(" B, rx held ")
        Log.dec(Int(boardRxStalls()))
        Log.text(", framing resets ")
        Log.dec(observer.framingResets)
        Log.text(", idle ")
        Log.dec(Int(boardIdlePermille()))
        Log.text(" permille, uptime ")
        Log.dec(boardMillis())
        Log.line(" ms")
    }
}

@_cdecl("fw_main")
func firmwareMain() {
    Log.text("fw: itcb-dongle 8-Ball firmware on ")
    Log.text(FirmwareConfig.board)
    Log.text(", name \"")
    Log.text(FirmwareConfig.name)
    Log.text("\", address ")
    Log.address(BDAddress.staticRandom(from: FirmwareConfig.address))
    Log.text(", seed ")
    Log.dec(FirmwareConfig.seed)
    Log.text("\n")
    Log.text("fw: state in .bss: driver ")
    Log.dec(MemoryLayout<Driver>.size)
    Log.text(" B (host ")
    Log.dec(MemoryLayout<Host>.size)
    Log.text(" B, 8-Ball ")
    Log.dec(MemoryLayout<EightBallPeripheral>.size)
    Log.text(" B, de-framer ")
    Log.dec(MemoryLayout<H4Deframer>.size)
    Log.text(" B); links ")
    Log.dec(Host.connectionCapacity)
    Log.text("; stack ")
    Log.dec(Int(boardStackSize()))
    Log.line(" B")
    var firmware = Firmware.boot()
    firmware.run()
}
