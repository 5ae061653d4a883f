// The 8-Ball as bare-metal firmware: the same sans-IO core as the Linux binary
// (Sources/BLEHost, Sources/EightBall, built with -D ITCB_FIRMWARE) driven by a
// polled main loop. The board (Firmware/board/board.h) gives time, the H4 UART,
// idle, the log and the static homes of the state; nothing here allocates.
//
// All state lives in .bss, built in place once (Host.initialize,
// EightBallPeripheral.initialize): no global initialisers, no big temporaries.
// The loop reaches the host and the 8-Ball only through pointers with mutating
// calls: a borrowed call on these non-copyable values from this module would
// copy them onto the stack.
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
@_extern(c, "board_host_storage") func boardHostStorage(_ size: Int, _ alignment: Int) -> UnsafeMutableRawPointer
@_extern(c, "board_logic_storage") func boardLogicStorage(_ size: Int, _ alignment: Int) -> UnsafeMutableRawPointer
@_extern(c, "board_deframer_storage") func boardDeframerStorage(_ size: Int, _ alignment: Int) -> UnsafeMutableRawPointer
@_extern(c, "board_packet_storage") func boardPacketStorage(_ size: Int, _ alignment: Int) -> UnsafeMutableRawPointer
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
    static func line(_ s: StaticString) { text(s); text("\n") }
    static func line(_ s: StaticString, _ value: Int) { text(s); dec(value); text("\n") }

    static func address(_ address: BDAddress) {
        for i in 0..<6 {
            if i > 0 { text(":") }
            hex(UInt32(address.printedByte(i)), digits: 2)
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

/// The main loop's own state: pointers to the static homes and a few counters.
/// A handful of words in fw_main's frame.
struct Firmware {
    let host: UnsafeMutablePointer<Host>
    let logic: UnsafeMutablePointer<EightBallPeripheral>
    let deframer: UnsafeMutablePointer<H4Deframer>
    let outgoing: UnsafeMutablePointer<HCIPacket>
    var deadline: UInt64? = nil
    var lastInput: UInt64 = 0
    var answers = 0
    var rejected = 0
    var connections = 0
    var framingResets = 0

    /// A packet begun and not finished for this long means the H4 framing is lost.
    static var stallLimit: UInt64 { 1_000 }

    /// Builds the host and the 8-Ball in their static homes, field by field.
    @inline(never)
    static func boot() -> Firmware {
        let host = boardHostStorage(MemoryLayout<Host>.size, MemoryLayout<Host>.alignment)
            .assumingMemoryBound(to: Host.self)
        let logic = boardLogicStorage(MemoryLayout<EightBallPeripheral>.size, MemoryLayout<EightBallPeripheral>.alignment)
            .assumingMemoryBound(to: EightBallPeripheral.self)
        let deframer = boardDeframerStorage(MemoryLayout<H4Deframer>.size, MemoryLayout<H4Deframer>.alignment)
            .bindMemory(to: H4Deframer.self, capacity: 1)
        let outgoing = boardPacketStorage(MemoryLayout<HCIPacket>.size, MemoryLayout<HCIPacket>.alignment)
            .bindMemory(to: HCIPacket.self, capacity: 1)

        var configuration = HostConfiguration(role: .peripheral)
        configuration.maxConnections = 1
        configuration.staticAddress = BDAddress.staticRandom(from: FirmwareConfig.address)
        configuration.forceRandomAddress = true
        Host.initialize(host, configuration: configuration)
        host.pointee.buildDatabase { database in
            EightBallPeripheral.initialize(
                logic, name: UnsafeRawBufferPointer(start: FirmwareConfig.name.utf8Start, count: FirmwareConfig.name.utf8CodeUnitCount),
                style: FirmwareConfig.answers, seed: FirmwareConfig.seed, database: &database)
        }
        deframer.initialize(to: H4Deframer())
        outgoing.initialize(to: HCIPacket())
        return Firmware(host: host, logic: logic, deframer: deframer, outgoing: outgoing)
    }

    // The loop's own frame stays small: everything that builds packets or events
    // (start, tick, service, feed) runs in a frame of its own, below it.
    @inline(never)
    mutating func run() -> Never {
        start()
        service()
        let boot = boardStackMark()
        Log.line("fw: boot stack peak ", Int(boot))
        while true {
            var busy = feed()
            let now = boardMillis()
            if deframer.pointee.isMidPacket, now >= lastInput + Firmware.stallLimit {
                framingLost("a packet began and never finished", now: now)
                busy = true
            }
            if let deadline, now >= deadline {
                tick(now: now)
                busy = true
            }
            if busy { service() } else { boardIdle() }
        }
    }

    @inline(never)
    func start() { host.pointee.start(now: boardMillis()) }

    @inline(never)
    func tick(now: UInt64) { host.pointee.tick(now: now) }

    /// Events to the 8-Ball, packets to the controller, the next timer.
    @inline(never)
    mutating func service() {
        processEvents()
        while host.pointee.nextOutgoing(into: &outgoing.pointee) {
            outgoing.pointee.withBytes { boardH4Write($0.baseAddress, $0.count) }
        }
        deadline = host.pointee.nextDeadline()
    }

    /// Cuts what the UART received into packets and hands each to the host. A
    /// packet that lies whole in the ring is handled where it lies
    /// (`H4Deframer.next`, `.inPlace`); one that began in an earlier read is
    /// finished byte by byte with `push`, which hands it over from the
    /// de-framer's buffer in place. One contiguous stretch of the ring a call,
    /// so what the packets caused is sent (service) before more input is taken.
    /// True when there was input.
    @inline(never)
    mutating func feed() -> Bool {
        do {
            var start: UnsafePointer<UInt8>? = nil
            let count = boardH4Peek(&start)
            guard count > 0, let start else { return false }
            lastInput = boardMillis()
            let bytes = UnsafeRawBufferPointer(start: start, count: count)
            var offset = 0
            while offset < count {
                let errors = deframer.pointee.framingErrors
                let before = offset
                if deframer.pointee.isMidPacket {
                    push(bytes[offset])
                    offset += 1
                } else {
                    switch deframer.pointee.next(bytes, offset: &offset) {
                    case .none:
                        break
                    case .inPlace(let type, let packetStart, let length):
                        handle(type, UnsafeRawBufferPointer(rebasing: bytes[packetStart..<(packetStart + length)]))
                    case .buffered(let type):
                        handleBuffered(type)  // not reached: next() is called at packet boundaries only
                    }
                }
                if deframer.pointee.framingErrors != errors {
                    boardH4Consume(count - before)
                    framingLost("bytes that are not HCI", now: lastInput)
                    break
                }
                // Handled (or copied into the de-framer): new input may take these bytes' place.
                boardH4Consume(offset - before)
            }
        }
        return true
    }

    /// One more byte of a packet begun earlier; the de-framer hands the packet
    /// over from its buffer once it is complete.
    @inline(never)
    mutating func push(_ byte: UInt8) {
        var byte = byte
        let deframer = self.deframer
        withUnsafeBytes(of: &byte) { raw in
            deframer.pointee.push(raw) { type, packet in handle(type, packet) }
        }
    }

    /// A packet `next` gathered in the de-framer. Kept in a frame of its own:
    /// `withPacket` is a borrowed call that copies the de-framer's 1 KB buffer
    /// onto the stack, which is why feed() finishes split packets with `push`.
    @inline(never)
    mutating func handleBuffered(_ type: UInt8) {
        let host = self.host, logic = self.logic
        deframer.pointee.withPacket { packet in
            host.pointee.handlePacket(type: type, packet, now: boardMillis(), delegate: &logic.pointee)
        }
        processEvents()
    }

    @inline(never)
    mutating func handle(_ type: UInt8, _ packet: UnsafeRawBufferPointer) {
        host.pointee.handlePacket(type: type, packet, now: boardMillis(), delegate: &logic.pointee)
        processEvents()
    }

    /// The H4 stream lost its framing: a fresh de-framer and a reset controller.
    @inline(never)
    mutating func framingLost(_ why: StaticString, now: UInt64) {
        framingResets += 1
        Log.text("h4: framing lost (")
        Log.text(why)
        Log.line("); resetting the controller")
        deframer.pointee = H4Deframer()
        host.pointee.resynchronize(now: now)
        processEvents()
    }

    /// Lets the host and the 8-Ball react until neither has anything more to say.
    mutating func processEvents() {
        var event = HostEvent.shutdownComplete  // the slot nextEvent(into:) fills
        while true {
            var progressed = false
            while host.pointee.nextEvent(into: &event) {
                progressed = true
                log(event)
                react(to: event)
            }
            poll()
            while let event = logic.pointee.nextEvent() { log(event) }
            if !host.pointee.hasEvents && !progressed { break }
        }
    }

    /// The 8-Ball's reaction in a frame of its own (its advertising data is built here).
    @inline(never)
    func react(to event: borrowing HostEvent) {
        logic.pointee.handle(copy event, host: &host.pointee)
    }

    @inline(never)
    mutating func log(_ event: borrowing HostEvent) {
        switch event {
        case .ready(let info):
            Log.text("host: ready, address ")
            Log.address(info.address)
            Log.line(", ACL buffers ", Int(info.aclPackets))
        case .advertising(let enabled):
            Log.line(enabled ? "host: advertising" : "host: advertising stopped")
        case .connected(let handle, let peer, _, let interval):
            connections += 1
            Log.text("host: connected handle 0x")
            Log.hex(UInt32(handle), digits: 4)
            Log.text(" peer ")
            Log.address(peer)
            Log.line(" interval ", Int(interval))
        case .connectionRejected(let handle, _):
            Log.line("host: connection refused (one link), handle ", Int(handle))
        case .disconnected(let handle, let reason):
            Log.text("host: disconnected handle 0x")
            Log.hex(UInt32(handle), digits: 4)
            Log.text(" reason 0x")
            Log.hex(UInt32(reason), digits: 2)
            Log.text("\n")
            status()
        case .idleDisconnect(let handle, _):
            Log.line("host: idle central disconnected, handle ", Int(handle))
        case .mtuExchanged(_, let mtu):
            Log.line("host: MTU ", Int(mtu))
        case .commandFailed(let opcode, let status):
            Log.text("host: command 0x")
            Log.hex(UInt32(opcode), digits: 4)
            Log.text(" failed, status 0x")
            Log.hex(UInt32(status), digits: 2)
            Log.text("\n")
        case .controllerTimeout(let opcode):
            Log.text("host: controller did not answer command 0x")
            Log.hex(UInt32(opcode), digits: 4)
            Log.line("; re-initialising")
        case .hardwareError(let code):
            Log.line("host: controller hardware error ", Int(code))
        case .pairingRefused:
            Log.line("host: pairing refused")
        case .dropped(let what):
            Log.text("host: dropped input (")
            switch what {
            case .hciEvent: Log.text("HCI event")
            case .aclUnknownHandle: Log.text("ACL for an unknown handle")
            case .aclMalformed: Log.text("malformed ACL")
            case .l2capUnknownChannel: Log.text("unknown L2CAP channel")
            case .txQueueFull: Log.text("transmit queue full")
            case .eventQueueFull: Log.text("event queue full")
            }
            Log.line(")")
        default:
            break
        }
    }

    @inline(never)
    func poll() { logic.pointee.poll(host: &host.pointee) }

    @inline(never)
    mutating func log(_ event: EightBallEvent) {
        switch event {
        case .questionAccepted(let connection):
            Log.text("8ball: question ")
            logic.pointee.withQuestion(connection: connection) { question in
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
        Log.dec(connections)
        Log.text(", rx ")
        Log.dec(Int(boardRxBytes()))
        Log.text(" B, tx ")
        Log.dec(Int(boardTxBytes()))
        Log.text(" B, rx held ")
        Log.dec(Int(boardRxStalls()))
        Log.text(", framing resets ")
        Log.dec(framingResets)
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
    Log.text("fw: state in .bss: host ")
    Log.dec(MemoryLayout<Host>.size)
    Log.text(" B, 8-Ball ")
    Log.dec(MemoryLayout<EightBallPeripheral>.size)
    Log.text(" B, de-framer ")
    Log.dec(MemoryLayout<H4Deframer>.size)
    Log.text(" B; links ")
    Log.dec(Host.connectionCapacity)
    Log.text("; stack ")
    Log.dec(Int(boardStackSize()))
    Log.line(" B")
    var firmware = Firmware.boot()
    firmware.run()
}
