import BLEHost

/// The 8-Ball peripheral policy: validates questions, picks answers, notifies
/// them, and keeps advertising going through the host. Pure state machine:
/// driven by the host's delegate calls, HostEvents and `poll`. Non-copyable:
/// its per-central buffers are reached in place only.
public struct EightBallPeripheral: GATTServerDelegate, ~Copyable {
    let pin = InPlacePin()
    public internal(set) var handles: EightBallDatabase
    public var style: AnswerStyle
    var picker: AnswerPicker
    var name = Capacity.DeviceName()
    @usableFromInline var centrals: Capacity.PerLink<CentralState> = InlineArray { _ in CentralState() }
    var events = Capacity.ApplicationEventRing<EightBallEvent>(filler: .questionAccepted(connection: 0))
    /// Answers notified since start (for status lines).
    public private(set) var answeredCount = 0
    /// Writes refused as not a question (ATT 0x0E).
    public private(set) var rejectedCount = 0
    /// `poll` may have an answer to send: a question was accepted, a
    /// subscription changed, or a notification found no room (it waits for
    /// room: answers are never dropped). The driver polls once per pass; most
    /// passes leave nothing to send.
    var answersWaiting = false

    /// An answer waits for room in the transmit queue (after `poll`).
    public var isWaitingForRoom: Bool { answersWaiting }

    /// `name` is the advertised and Device Name (at most 248 bytes of UTF-8). The
    /// 8-Ball's services are added to `database`, which the host then owns.
    public init(name: UnsafeRawBufferPointer, style: AnswerStyle, seed: UInt64, database: inout GATTDatabase) {
        let name = UnsafeRawBufferPointer(rebasing: name[0..<min(name.count, Capacity.DeviceName.capacityCount)])
        handles = EightBallDatabase.build(name: name, into: &database)
        self.style = style
        picker = AnswerPicker(seed: seed)
        self.name.append(name)
    }

    /// Builds an 8-Ball at `pointer` in place (firmware: no stack temporary of
    /// its per-central buffers), adding its services to the host's `database`:
    /// `init`, written where the 8-Ball lives, as `Host.initialize` does.
    /// The memory may hold anything beforehand.
    public static func initialize(
        _ pointer: UnsafeMutablePointer<EightBallPeripheral>, name: UnsafeRawBufferPointer, style: AnswerStyle,
        seed: UInt64, database: inout GATTDatabase
    ) {
        build(&pointer.pointee, name: name, style: style, seed: seed, database: &database)
    }

    @inline(never) static func build(
        _ home: inout EightBallPeripheral, name: UnsafeRawBufferPointer, style: AnswerStyle, seed: UInt64,
        database: inout GATTDatabase
    ) {
        withUnsafeMutablePointer(to: &home) {
            $0.initialize(to: EightBallPeripheral(name: name, style: style, seed: seed, database: &database))
        }
    }

    public mutating func nextEvent() -> EightBallEvent? { events.pop() }

    /// The last accepted question of a connection (for logs), in place; empty if none.
    /// Inlinable so the run loop's per-question log line gets it specialised (the
    /// generic entry point looks up `FixedBytes` metadata on every call).
    @inlinable public func withQuestion<R>(connection: UInt16, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let index = slot(connection) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return centrals[index].question.withBytes(body)
    }

    // MARK: - Host events

    public mutating func handle(_ event: HostEvent, host: inout Host) {
        switch event {
        case .ready:
            let (data, scanResponse) = name.withBytes {
                AdvertisingData.advertisement(service: EightBallUUID.service, name: $0)
            }
            host.startAdvertising(data: data, scanResponse: scanResponse)
        case .connected(let handle, _, _, _):
            if let index = freeSlot() { centrals[index].claim(handle) }
        case .disconnected(let handle, _):
            if let index = slot(handle) { centrals[index].inUse = false }
        default:
            break
        }
    }

    /// Sends answers that are due: after an accepted question, as soon as the
    /// central has notifications enabled (one notification per accepted
    /// question; docs/COMMAND-LINE.md, "The peripheral").
    public mutating func poll(host: inout Host) {
        guard answersWaiting else { return }
        answersWaiting = false
        for index in 0..<Capacity.links where centrals[index].inUse && centrals[index].pending {
            let connection = centrals[index].handle
            guard host.subscription(connection: connection, attribute: handles.answerHandle) & 0x0001 != 0 else {
                if !centrals[index].reportedWaiting {
                    centrals[index].reportedWaiting = true
                    events.push(.answerWaitingForSubscription(connection: connection))
                }
                continue
            }
            var value = Capacity.AnswerValue()
            Answers.value(centrals[index].answer, style: style, into: &value)
            let sent = value.withBytes { host.notify(connection: connection, attribute: handles.answerHandle, value: $0) }
            if sent {
                answeredCount += 1
                centrals[index].pending = false
                events.push(.answered(connection: connection, answer: centrals[index].answer))
            } else {
                answersWaiting = true  // no room for this link now: again when a slot frees
            }
        }
    }

    // MARK: - GATTServerDelegate

    public mutating func serverRead(connection: UInt16, attribute: UInt16, into value: inout Capacity.AttributeValue) -> UInt8 {
        guard attribute == handles.answerHandle else { return ATTError.readNotPermitted }
        // The last answer for this central; empty before its first question (rule 3).
        if let index = slot(connection), centrals[index].answer >= 0 {
            Answers.value(centrals[index].answer, style: style, into: &value)
        }
        return 0
    }

    public mutating func serverWrite(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) -> UInt8 {
        guard attribute == handles.questionHandle else { return ATTError.writeNotPermitted }
        let valid = Question.isValid(value)
        // The central's slot looked up (or claimed) and the text kept (for the log
        // line) once for both outcomes; a write that is no question leaves the
        // buffer alone while an answer still waits for the question it holds.
        let index = slot(connection) ?? claimSlot(connection)
        if let index, valid || !centrals[index].pending {
            centrals[index].question.removeAll()
            centrals[index].question.append(value)
        }
        guard valid else {
            // ATT 0x0E: the ITCB central shows "Please rephrase as a question" (rule 1).
            rejectedCount += 1
            events.push(.questionRejected(connection: connection, length: value.count))
            return ATTError.unlikelyError
        }
        guard let index else { return ATTError.unlikelyError }
        centrals[index].answer = picker.next()
        centrals[index].pending = true
        centrals[index].reportedWaiting = false
        answersWaiting = true
        events.push(.questionAccepted(connection: connection))
        return 0
    }

    /// Subscriptions live in the host's CCCD table; `poll` sends what they unblock.
    public mutating func serverSubscriptionChanged(connection: UInt16, attribute: UInt16, value: UInt16) {
        answersWaiting = true
    }

    // MARK: - Slots

    @usableFromInline func slot(_ handle: UInt16) -> Int? {
        for index in 0..<Capacity.links where centrals[index].inUse && centrals[index].handle == handle { return index }
        return nil
    }

    func freeSlot() -> Int? {
        for index in 0..<Capacity.links where !centrals[index].inUse { return index }
        return nil
    }

    mutating func claimSlot(_ handle: UInt16) -> Int? {
        guard let index = freeSlot() else { return nil }
        centrals[index].claim(handle)
        return index
    }
}

// MARK: - HostApplication

/// The 8-Ball is the application the driver runs on every board (Linux wraps
/// it for its log lines; the firmware runs it as it is). The host calls its
/// GATT server back with the requests in each packet; as a client it
/// subscribes to nothing.
extension EightBallPeripheral: GATTClientDelegate, HostApplication {
    public mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        handle(event, host: &host)
    }

    public mutating func poll(host: inout Host, now: UInt64) {
        poll(host: &host)
    }
}
