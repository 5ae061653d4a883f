import BLEHost
import EightBall

/// The peripheral role in the run loop: the 8-Ball (the application and its
/// GATT server) plus its log lines.
struct PeripheralLogic: RoleLogic, ~Copyable {
    var ball: EightBallPeripheral
    /// Who is connected on which handle: the operator's lines name the asker
    /// by address (set when a central connects, so no allocation per question).
    var askers = [(handle: UInt16, address: BDAddress)](repeating: (0xFFFF, .zero), count: Capacity.links)

    // The host's GATT callbacks are the 8-Ball's server.
    mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout AttributeValue) -> UInt8 {
        ball.serverRead(connection: connection, attribute: attribute, into: &value)
    }
    mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        ball.serverWrite(connection: connection, attribute: attribute, value: value)
    }
    mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16) {
        ball.serverSubscriptionChanged(connection: connection, attribute: attribute, value: value)
    }

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        if case .connected(let handle, let peer, false, _) = event {
            let slot = askers.firstIndex { $0.handle == handle } ?? askers.firstIndex { $0.handle == 0xFFFF }
            if let slot { askers[slot] = (handle, peer) }
        } else if case .disconnected(let handle, _) = event, let slot = askers.firstIndex(where: { $0.handle == handle }) {
            askers[slot].handle = 0xFFFF
        }
        ball.handle(event, host: &host)
    }

    /// "E1:79:D7:39:10:19" (or the handle, for a link made before it was seen).
    /// `mutating` to be reached by address, as `log` (no copy of the role).
    mutating func asker(_ connection: UInt16, into line: inout LogLine) {
        if let entry = askers.first(where: { $0.handle == connection }) {
            line.address(entry.address)
        } else {
            line.text("handle ")
            line.hex(connection)
        }
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
            // The operator's line: who, what was written (when the 8-Ball kept
            // it: no answer was pending) and what it was told.
            guard LogLevel.info <= Log.level else { return }
            var line = LogLine(.info)
            line.text("rejected from ")
            asker(connection, into: &line)
            ball.withQuestion(connection: connection) { text in
                if text.count == length, length > 0 {
                    line.text(": \"")
                    line.value(text)
                    line.text("\" is not a question")
                } else {
                    line.text(": a write that is not a question (")
                    line.decimal(length)
                    line.text(" bytes)")
                }
            }
            line.text(" -> ATT error 0x0E (please rephrase as a question)")
            line.write()
        case .answered(let connection, let answer):
            // The one info line of a question: built in place, no allocation.
            // The operator's words: who asked, what, and the phrase (whatever
            // --answers sent on the air: a slug is for apps).
            guard LogLevel.info <= Log.level else { return }
            var line = LogLine(.info)
            line.text("answer to ")
            asker(connection, into: &line)
            line.text(": \"")
            ball.withQuestion(connection: connection) { line.value($0) }
            line.text("\" -> ")
            line.text(Answers.phrase(answer))
            line.write()
        case .answerWaitingForSubscription(let connection):
            Log.debug("answer on 0x\(String(connection, radix: 16)) waits for the subscription")
        }
    }

    var isWaitingForRoom: Bool { ball.isWaitingForRoom }
    var statusDetail: String? { "\(ball.answeredCount) question(s) answered" }
    var questionCounts: (answered: Int, rejected: Int) { (ball.answeredCount, ball.rejectedCount) }
    var exitCode: Int32? { nil }
}
