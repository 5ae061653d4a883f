// Benchmark of the core's steady state (scripts/bench.sh builds and runs it):
// one central asks N questions through Host + EightBallPeripheral — ACL in,
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

@main
struct CoreBench {
    static func main() {
        let n = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000
        var database = GATTDatabase()
        var logic = EightBallPeripheral(name: bytes("Bench8"), style: .slug, seed: 1, database: &database)
        var host = Host(configuration: HostConfiguration(role: .peripheral), database: database)
        var packet = HCIPacket()
        var event = FixedBytes<64>()
        host.start(now: 0)
        // Bring-up: answer every command with success (LE buffers 27 x 8).
        for _ in 0..<40 {
            while host.nextOutgoing(into: &packet) {
                event.removeAll()
                event.append(0x0E)
                event.append(packet[1] == 0x02 && packet[2] == 0x20 ? 7 : 4)
                event.append(1)
                event.append(packet[1])
                event.append(packet[2])
                event.append(0)
                if packet[1] == 0x02 && packet[2] == 0x20 { event.append(27); event.append(0); event.append(8) }
                event.withBytes { host.handlePacket(type: H4PacketType.event, $0, now: 0, delegate: &logic) }
            }
            while let e = host.nextEvent() { logic.handle(e, host: &host) }
        }
        let connect: StaticString = "\u{3E}\u{13}\u{01}\u{00}\u{40}\u{00}\u{01}\u{01}\u{01}\u{02}\u{03}\u{04}\u{05}\u{46}\u{18}\u{00}\u{00}\u{00}\u{10}\u{01}\u{00}"
        host.handlePacket(type: H4PacketType.event, bytes(connect), now: 0, delegate: &logic)
        while let e = host.nextEvent() { logic.handle(e, host: &host) }
        while host.nextOutgoing(into: &packet) {}
        let q = logic.handles.questionHandle, cccd = logic.handles.answerHandle + 1
        // Subscribe once: ACL [handle 0x040, PB 0b10] + L2CAP + ATT Write Request to the CCCD.
        var acl = FixedBytes<64>()
        for b: UInt8 in [0x40, 0x20, 9, 0, 5, 0, 4, 0, 0x12, UInt8(cccd), 0, 1, 0] { acl.append(b) }  // CCCD = 0x0001
        acl.withBytes { host.handlePacket(type: H4PacketType.acl, $0, now: 0, delegate: &logic) }
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
        var hostEvent = HostEvent.shutdownComplete  // drained as the run loop does
        let start = now()
        for _ in 0..<n {
            question.withBytes { host.handlePacket(type: H4PacketType.acl, $0, now: 1, delegate: &logic) }
            while host.nextEvent(into: &hostEvent) {}
            logic.poll(host: &host)
            while logic.nextEvent() != nil {}
            while host.nextOutgoing(into: &packet) { out += 1 }
            host.handlePacket(type: H4PacketType.event, bytes(completed), now: 1, delegate: &logic)
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
