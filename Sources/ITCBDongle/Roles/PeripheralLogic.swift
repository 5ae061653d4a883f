import BLEHost
import EightBall

/// The peripheral role in the run loop: the 8-Ball (the application and its
/// GATT server) plus its log lines.
struct PeripheralLogic: RoleLogic, ~Copyable {
    var ball: EightBallPeripheral
    /// Who is connected on which handle: the operator's lines name the asker
    /// by address (set when a central connects, so no allocation per question).
    /// In place, one slot per link: no arrays' uniqueness checks at each use.
    var askers = Capacity.PerLink<(handle: UInt16, address: BDAddress)>(repeating: (0xFFFF, .zero))
    /// Each asker's last question, timed (by the same slot as `askers`), and
    /// how many answers wait for the controller to report them sent.
    var timings = Capacity.PerLink<AnswerTiming>(repeating: AnswerTiming())
    var awaitingSent = 0
    /// Question write received → answer notification queued, and → sent
    /// (the controller's Number of Completed Packets for it).
    var queuedLatency = LatencyHistogram()
    var sentLatency = LatencyHistogram()
    /// Answers are timed only for a metrics file: no clock read per question otherwise.
    let timed: Bool

    init(ball: consuming EightBallPeripheral, timed: Bool) {
        self.ball = ball
        self.timed = timed
    }

    // The host's GATT callbacks are the 8-Ball's server.
    mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout Capacity.AttributeValue) -> UInt8 {
        ball.serverRead(connection: connection, attribute: attribute, into: &value)
    }
    mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        let status = ball.serverWrite(connection: connection, attribute: attribute, value: value)
        if timed, status == 0, attribute == ball.handles.questionHandle, let slot = askerSlot(connection) {
            // The last answer may still wait for its completed packets: it keeps its own time.
            timings[slot].received = monotonicMicroseconds()
        }
        return status
    }
    mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16) {
        ball.serverSubscriptionChanged(connection: connection, attribute: attribute, value: value)
    }

    mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        if case .connected(let handle, let peer, false, _) = event {
            let slot = askerSlot(handle) ?? askerSlot(0xFFFF)
            if let slot {
                askers[slot] = (handle, peer)
                forgetTiming(slot)
            }
        } else if case .disconnected(let handle, _) = event, let slot = askerSlot(handle) {
            askers[slot].handle = 0xFFFF
            forgetTiming(slot)
        }
        ball.handle(event, host: &host)
    }

    /// "E1:79:D7:39:10:19" (or the handle, for a link made before it was seen).
    /// `mutating` to be reached by address, as `log` (no copy of the role).
    mutating func asker(_ connection: UInt16, into line: inout LogLine) {
        if let slot = askerSlot(connection) {
            line.address(askers[slot].address)
        } else {
            line.text("handle ")
            line.hex(connection)
        }
    }

    func askerSlot(_ connection: UInt16) -> Int? {
        for slot in askers.indices where askers[slot].handle == connection { return slot }
        return nil
    }

    mutating func poll(host: inout Host, now: UInt64) {
        ball.poll(host: &host)
        while let event = ball.nextEvent() {
            if case .answered(let connection, _) = event { answerQueued(connection, host: host) }
            log(event)
        }
        if awaitingSent > 0 { checkSent(host) }
    }

    // MARK: - Timing answers (--metrics-file)

    /// The answer's notification is queued: its first latency, and the mark
    /// its link's completed packets reach once it has gone over the air.
    @inline(never)
    mutating func answerQueued(_ connection: UInt16, host: borrowing Host) {
        guard let slot = askerSlot(connection), timings[slot].received != 0 else { return }
        queuedLatency.observe(microseconds: Int(monotonicMicroseconds() &- timings[slot].received))
        guard let mark = host.completionMark(connection: connection) else { return forgetTiming(slot) }
        if timings[slot].waiting == timings[slot].queued.count { timings[slot].dropFirst(1) }  // a central that never lets one finish
        else { awaitingSent += 1 }
        let index = timings[slot].waiting
        timings[slot].queued[index] = timings[slot].received
        timings[slot].marks[index] = mark
        timings[slot].waiting = index + 1
        timings[slot].received = 0
    }

    /// Answers whose packets the controller reported completed since: their second latency.
    @inline(never)
    mutating func checkSent(_ host: borrowing Host) {
        var now: UInt64 = 0
        for slot in 0..<timings.count where timings[slot].waiting > 0 {
            guard let done = host.completedFragments(connection: askers[slot].handle) else {
                forgetTiming(slot)
                continue
            }
            // Oldest first: one report of completed packets may cover several answers.
            var sent = 0
            while sent < timings[slot].waiting, done >= timings[slot].marks[sent] {
                if now == 0 { now = monotonicMicroseconds() }
                sentLatency.observe(microseconds: Int(now &- timings[slot].queued[sent]))
                sent += 1
            }
            timings[slot].dropFirst(sent)
            awaitingSent -= sent
        }
    }

    mutating func forgetTiming(_ slot: Int) {
        awaitingSent -= timings[slot].waiting
        timings[slot] = AnswerTiming()
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
            Log.debug("question on 0x\(hex: connection) (\(ball.withQuestion(connection: connection) { $0.count }) bytes)")
        case .questionRejected(let connection, _), .answered(let connection, _):
            // The operator's lines, one LogLine for both (its prefix is inlined
            // where a line is made). Rejected: who, what was written (when the
            // 8-Ball kept it: no answer was pending) and what it was told.
            // Answered, the one info line of a question, no allocation: who
            // asked, what, and the phrase (whatever --answers sent on the air:
            // a slug is for apps).
            guard LogLevel.info <= Log.level else { return }
            // One writer for both: who, then the text (once, from where the
            // 8-Ball keeps it), then the outcome.
            var answer: Int? = nil, length = 0
            if case .answered(_, let index) = event { answer = index }
            if case .questionRejected(_, let count) = event { length = count }
            var line = LogLine(.info)
            line.text(answer != nil ? "answer to " : "rejected from ")
            asker(connection, into: &line)
            ball.withQuestion(connection: connection) { text in
                if answer != nil || (text.count == length && length > 0) {
                    line.text(": \"")
                    line.value(text)
                    line.text(answer != nil ? "\" -> " : "\" is not a question")
                } else {
                    line.text(": a write that is not a question (")
                    line.decimal(length)
                    line.text(" bytes)")
                }
            }
            if let answer {
                line.text(Answers.phrase(answer))
            } else {
                line.text(" -> ATT error 0x0E (please rephrase as a question)")
            }
            line.write()
        case .answerWaitingForSubscription(let connection):
            Log.debug("answer on 0x\(hex: connection) waits for the subscription")
        }
    }

    var isWaitingForRoom: Bool { ball.isWaitingForRoom }
    mutating func appendStatusDetail(to status: inout BuiltText.Builder) {
        status.appendLiteral(", ")
        status.appendInterpolation(ball.answeredCount)
        status.appendLiteral(" question(s) answered")
    }
    mutating func addCounts(to counts: inout MetricCounts) {
        counts.answered += ball.answeredCount
        counts.rejected += ball.rejectedCount
        counts.answerQueued.add(queuedLatency)
        counts.answerSent.add(sentLatency)
    }
    var exitCode: Int32? { nil }
}

/// One asker's timed question and answers: when its question's write was
/// accepted (µs, 0: none timed), and the answers queued and not yet reported
/// sent, oldest first: each its question's time and the completed-packet count
/// it waits for. Several, so that the next question, written (and answered)
/// before the controller reported the last answer's packets, costs no answer
/// its time (the controller may report them late, and several at once).
struct AnswerTiming {
    var received: UInt64 = 0
    var queued = InlineArray<4, UInt64>(repeating: 0)
    var marks = InlineArray<4, Int>(repeating: 0)
    var waiting = 0

    /// The `count` oldest answers are done with.
    mutating func dropFirst(_ count: Int) {
        guard count > 0 else { return }
        for index in 0 ..< waiting - count {
            queued[index] = queued[index + count]
            marks[index] = marks[index + count]
        }
        waiting -= count
    }
}
