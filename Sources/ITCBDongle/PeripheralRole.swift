import BLEHost
import EightBall

/// The peripheral role in the run loop: the 8-Ball policy plus its log lines.
extension EightBallPeripheral: RoleLogic {
    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        handle(event, host: &host)
    }

    mutating func poll(host: inout Host, now: UInt64) {
        poll(host: &host)
        while let event = nextEvent() {
            switch event {
            case .questionAccepted(let connection):
                // The text goes out once, with its answer (the info line below).
                Log.debug("question on 0x\(String(connection, radix: 16)) (\(withQuestion(connection: connection) { $0.count }) bytes)")
            case .questionRejected(let connection, let length):
                Log.info("not a question on 0x\(String(connection, radix: 16)) (\(length) bytes): answered ATT error 0x0E")
            case .answered(let connection, let answer):
                // The one info line of a question: built in place, no allocation.
                Log.line(.info) { line in
                    var value = FixedBytes<32>()
                    answerValue(answer, into: &value)
                    line.text("answer on ")
                    line.hex(connection)
                    line.text(": ")
                    value.withBytes { line.value($0) }
                    line.text(" to \"")
                    withQuestion(connection: connection) { line.value($0) }
                    line.text("\"")
                }
            case .answerWaitingForSubscription(let connection):
                Log.debug("answer on 0x\(String(connection, radix: 16)) waits for the subscription")
            }
        }
    }

    mutating func nextDeadline() -> UInt64? { nil }
    var statusDetail: String? { mutating get { "\(answeredCount) question(s) answered" } }
    var exitCode: Int32? { mutating get { nil } }
}
