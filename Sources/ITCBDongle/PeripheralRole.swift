import BLEHost
import EightBall

/// The peripheral role in the run loop: the 8-Ball (the application and its
/// GATT server) plus its log lines.
struct PeripheralLogic: RoleLogic, ~Copyable {
    var ball: EightBallPeripheral

    mutating func receive(type: UInt8, _ packet: UnsafeRawBufferPointer, host: inout Host, now: UInt64) {
        ball.receive(type: type, packet, host: &host, now: now)
    }

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        ball.handle(event, host: &host)
    }

    mutating func poll(host: inout Host, now: UInt64) {
        ball.poll(host: &host)
        while let event = ball.nextEvent() { log(event) }
    }

    /// Apart from `poll`'s loop, where the optimiser keeps the event queue's
    /// indices in registers: a borrowing call on `ball` there had to put the
    /// peripheral back together in a stack copy first (4.9 KB, twice per
    /// answered question in the Embedded build). Here `ball` is read where it
    /// lies; `mutating` only so that callers pass `self` by address (a
    /// borrowing call copied the whole role into the caller's frame).
    @inline(never)
    mutating func log(_ event: EightBallEvent) {
        switch event {
        case .questionAccepted(let connection):
            // The text goes out once, with its answer (the info line below).
            Log.debug("question on 0x\(String(connection, radix: 16)) (\(ball.withQuestion(connection: connection) { $0.count }) bytes)")
        case .questionRejected(let connection, let length):
            Log.info("not a question on 0x\(String(connection, radix: 16)) (\(length) bytes): answered ATT error 0x0E")
        case .answered(let connection, let answer):
            // The one info line of a question: built in place, no allocation.
            guard LogLevel.info <= Log.level else { return }
            var line = LogLine(.info)
            var value = Capacity.AnswerValue()
            Answers.value(answer, style: ball.style, into: &value)
            line.text("answer on ")
            line.hex(connection)
            line.text(": ")
            value.withBytes { line.value($0) }
            line.text(" to \"")
            ball.withQuestion(connection: connection) { line.value($0) }
            line.text("\"")
            line.write()
        case .answerWaitingForSubscription(let connection):
            Log.debug("answer on 0x\(String(connection, radix: 16)) waits for the subscription")
        }
    }

    var isWaitingForRoom: Bool { ball.isWaitingForRoom }
    var statusDetail: String? { "\(ball.answeredCount) question(s) answered" }
    var exitCode: Int32? { nil }
}
