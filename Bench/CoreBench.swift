// Benchmark of the core's steady state (scripts/bench.sh builds and runs it):
// one central asks N questions through the driver (HostLoop: Host +
// EightBallPeripheral), as every board runs it — ACL in,
// ATT Write Request, Write Response and answer notification out, credits back.
// Prints time per question; under valgrind the same binary gives instruction
// counts and heap usage, which must not grow with N.
import BLEHost
import EightBall
import Glibc

func bytes(_ s: StaticString) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
}

func now() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// The bench's board: it hears nothing (what a log would cost is not the core's).
struct Silent: HostLoopObserver {
    mutating func observe(_ event: HostEvent, host: borrowing Host) {}
}

@main
struct CoreBench {
    static func main() {
        let n = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000
        var database = GATTDatabase()
        let logic = EightBallPeripheral(name: bytes("Bench8"), style: .slug, seed: 1, database: &database)
        var settings = HostLoopSettings()
        settings.readyTimeout = nil
        var driver = HostLoop(host: Host(configuration: HostConfiguration(role: .peripheral), database: database),
                                app: logic, setup: NoSetup(), settings: settings)
        var board = Silent()
        var event = FixedBytes<64>()
        driver.start(now: 0)
        // Bring-up: answer every command with success (LE buffers 27 x 8).
        for _ in 0..<40 {
            driver.service(now: 0, observer: &board)
            while driver.nextOutgoing() {
                let opcode0 = driver.outgoing[1], opcode1 = driver.outgoing[2]
                event.removeAll()
                event.append(0x0E)
                event.append(opcode0 == 0x02 && opcode1 == 0x20 ? 7 : 4)
                event.append(1)
                event.append(opcode0)
                event.append(opcode1)
                event.append(0)
                if opcode0 == 0x02 && opcode1 == 0x20 { event.append(27); event.append(0); event.append(8) }
                event.withBytes { driver.receive(type: H4PacketType.event, $0, now: 0, observer: &board) }
            }
        }
        let connect: StaticString = "\u{3E}\u{13}\u{01}\u{00}\u{40}\u{00}\u{01}\u{01}\u{01}\u{02}\u{03}\u{04}\u{05}\u{46}\u{18}\u{00}\u{00}\u{00}\u{10}\u{01}\u{00}"
        driver.receive(type: H4PacketType.event, bytes(connect), now: 0, observer: &board)
        while driver.nextOutgoing() {}
        let q = driver.app.handles.questionHandle, cccd = driver.app.handles.answerHandle + 1
        // Subscribe once: ACL [handle 0x040, PB 0b10] + L2CAP + ATT Write Request to the CCCD.
        var acl = FixedBytes<64>()
        for b: UInt8 in [0x40, 0x20, 9, 0, 5, 0, 4, 0, 0x12, UInt8(cccd), 0, 1, 0] { acl.append(b) }  // CCCD = 0x0001
        acl.withBytes { driver.receive(type: H4PacketType.acl, $0, now: 0, observer: &board) }
        // The question: ACL header, L2CAP header (ATT channel), ATT Write Request.
        let text = "Is it fast now?".utf8
        let attLength = 3 + text.count
        var question = FixedBytes<64>()
        for b: UInt8 in [0x40, 0x20, UInt8(4 + attLength), 0, UInt8(attLength), 0, 4, 0, 0x12, UInt8(q), 0] {
            question.append(b)
        }
        for b in text { question.append(b) }
        let completed: StaticString = "\u{13}\u{05}\u{01}\u{40}\u{00}\u{08}\u{00}"
        var out = 0
        let start = now()
        // Each question as a board runs it: the packet in, service, packets out, credits back.
        for _ in 0..<n {
            question.withBytes { driver.receive(type: H4PacketType.acl, $0, now: 1, observer: &board) }
            driver.service(now: 1, observer: &board)
            while driver.app.nextEvent() != nil {}
            while driver.nextOutgoing() { out += 1 }
            driver.receive(type: H4PacketType.event, bytes(completed), now: 1, observer: &board)
        }
        let elapsed = now() - start
        // Every question must have produced its Write Response and its notification.
        guard out >= 2 * n else {
            print("bench: only \(out) packets for \(n) questions: the benchmark is not exercising the stack")
            exit(1)
        }
        print("questions: \(n), packets out: \(out), \(elapsed / UInt64(max(n, 1))) ns per question")
    }
}
