import BLEHost

/// The 8-Ball asker as a pure state machine: scan → filter → connect → exchange
/// MTU → discover service, characteristics and the Answer CCCD → per question:
/// subscribe, write the question, wait for the notification, unsubscribe.
public struct EightBallCentral: ~Copyable {
    let pin = InPlacePin()
    enum Phase: Equatable {
        case idle, scanning, connecting, naming, nameRead, rejecting, discovering, ready
        case subscribing, writing, waitingAnswer, unsubscribing, disconnecting, finished
        /// A question ran out of time: its link (or Create Connection) is being
        /// closed; the next question starts afresh.
        case abandoning
    }

    enum Outcome: Equatable { case none, answered, rejected, failed(UInt8), offline }

    public var settings: CentralSettings
    var phase = Phase.idle
    var table = ScanTable()
    /// Addresses already reported in scan-only mode: a ring, oldest first
    /// forgotten when it is full, so every 8-Ball heard is listed.
    var reported: Capacity.ReportedEightBalls<UInt64> = InlineArray(repeating: 0)
    var reportedCount = 0
    /// Where the next address goes once the ring is full (its oldest entry).
    var reportedOldest = 0
    /// 8-Balls listed in all (those forgotten to make room included).
    public internal(set) var listedCount = 0
    public internal(set) var target = ScanEntry()
    var connection: UInt16? = nil
    var connectAttempts = 0
    /// The phase's own timer: the scan's end, or `finish`'s wait for the link to close.
    var deadline: UInt64? = nil
    /// When the question in flight must be answered (`settings.questionTimeout`
    /// after it was asked): whatever it is waiting for then, it is over.
    var questionDue: UInt64? = nil
    /// An 8-Ball matched while the scan settles (`settings.settleTime`): it is
    /// connected to when `settleUntil` comes, unless the platform refused first.
    var settleUntil: UInt64? = nil
    var hasTarget = false

    // Discovery results.
    var serviceEnd: UInt16 = 0
    var questionHandle: UInt16 = 0
    var answerHandle: UInt16 = 0
    var cccdHandle: UInt16 = 0

    // The question in flight.
    var question = Capacity.AttributeValue()
    var hasQuestion = false
    var retried = false
    var askedAt: UInt64 = 0
    var answer = Capacity.AnswerValue()
    var hasAnswer = false
    var outcome = Outcome.none
    var finishing = false

    var events = Capacity.ApplicationEventRing<CentralEvent>(filler: .rejected)

    public init(settings: CentralSettings) { self.settings = settings }

    public var isIdleForQuestion: Bool { !hasQuestion && phase != .finished && !finishing }
    public var isFinished: Bool { phase == .finished }
    /// Scan-only mode found at least one 8-Ball.
    public var reportedAny: Bool { reportedCount > 0 }
    /// The scan is listening before it connects (`settings.settleTime`).
    public var isSettling: Bool { settleUntil != nil }
    public func nextDeadline() -> UInt64? { earliest(earliest(deadline, questionDue), settleUntil) }
    public mutating func nextEvent() -> CentralEvent? { events.pop() }

    /// Starts looking for an 8-Ball (the host may still be initialising).
    public mutating func start(host: inout Host, now: UInt64) {
        beginScan(&host, now)
    }

    /// Asks a question (one at a time); it goes out as soon as the link is ready.
    @discardableResult
    public mutating func ask(_ text: UnsafeRawBufferPointer, host: inout Host, now: UInt64) -> Bool {
        guard isIdleForQuestion, text.count <= Question.maxLength else { return false }
        question = FixedBytes(text)
        hasQuestion = true
        retried = false
        // Before the controller is ready the clock starts at `.ready`.
        questionDue = host.isReady ? now + settings.questionTimeout : nil
        if phase == .ready { beginQuestion(&host, now) }
        if phase == .idle { beginScan(&host, now) }
        return true
    }

    /// Ends the session: disconnects (if connected) and reports .finished.
    public mutating func finish(host: inout Host) {
        finishing = true
        if let connection, phase != .disconnecting {
            phase = .disconnecting
            deadline = host.now + settings.closeGrace
            host.disconnect(connection: connection)
        } else if connection == nil {
            host.stopScanning()
            end()
        }
    }

    // MARK: - Events

    public mutating func handle(_ event: HostEvent, host: inout Host, now: UInt64) {
        switch event {
        case .ready:
            // The scan's time counts from when the controller can scan: a slow
            // or silent bring-up is the driver's to judge, not "nothing found".
            if hasQuestion, questionDue == nil { questionDue = now + settings.questionTimeout }
            if phase == .scanning {
                scanStarted(now)
                host.startScanning()
            }
        case .advertisingReport:
            guard phase == .scanning else { return }
            let index = table.add(host.advertisingReport)
            let entry = table.entries[index]
            guard matches(entry) else { return }
            if settings.listOnly {
                reportOnce(entry)
                return
            }
            target = entry
            hasTarget = true
            // Still settling: the latest report of the match is connected to then.
            if let until = settleUntil, now < until { return }
            connectToTarget(&host, now)
        case .connectionFailed:
            if phase == .abandoning { return linkAbandoned(&host, now) }
            guard phase == .connecting else { return }
            if hasQuestion, let due = questionDue, now >= due {
                phase = .idle
                return questionOverdue(&host, now)
            }
            // Try again from a fresh scan: the advertiser may have moved on.
            if connectAttempts < 3 {
                beginScan(&host, now)
            } else {
                fail(.offline)
            }
        case .connected(let handle, let peer, let isCentral, _):
            guard isCentral else { return }
            // While scanning, only a late link to the 8-Ball this session tried
            // (its attempt given up, the controller completing it anyway). Any
            // other is not ours: an LE Create Connection a previous host left
            // pending (Bumble's HCI Reset does not clear it) completes whenever
            // its 8-Ball advertises; adopted, it ended a --scan's listing and
            // dropped its deadline (a hang), or asked the wrong 8-Ball.
            let tried = connectAttempts > 0 && peer.value == target.address.value
            guard phase == .connecting || (phase == .scanning && tried), connection == nil else {
                host.disconnect(connection: handle)  // a late link from a cancelled attempt
                if phase == .abandoning, connection == nil { linkAbandoned(&host, now) }
                return
            }
            connection = handle
            phase = .discovering
            deadline = nil
            events.push(.connected(address: peer))
            host.clientExchangeMTU(connection: handle)
        case .disconnected(let handle, _):
            guard handle == connection else { return }
            connection = nil
            linkLost(&host, now)
        case .gattClient(let client):
            handleClient(client, &host, now)
        default:
            break
        }
    }

    mutating func handleClient(_ event: GATTClientEvent, _ host: inout Host, _ now: UInt64) {
        guard let connection else { return }
        switch event {
        case .mtuExchanged:
            if target.summary.nameIsComplete {
                host.clientDiscoverPrimaryService(connection: connection, uuid: EightBallUUID.service)
            } else {
                // Advertised shortened (past 29 bytes even in the scan response):
                // the whole name is the GAP Device Name.
                phase = .naming
                host.clientDiscoverPrimaryService(connection: connection, uuid: BLEUUID(uuid16: GATTType.gapService))
            }
        case .serviceDiscovered(_, let start, let end):
            serviceEnd = end
            host.clientDiscoverCharacteristics(connection: connection, start: start, end: end)
        case .serviceNotFound where phase == .naming, .error where phase == .naming:
            nameRead(connection, found: false)
        case .characteristicsDiscovered where phase == .naming:
            guard let name = host.clientCharacteristic(connection: connection, BLEUUID(uuid16: GATTType.deviceName)),
                  host.clientRead(connection: connection, attribute: name.valueHandle) else {
                return nameRead(connection, found: false)
            }
        case .readCompleted where phase == .naming:
            nameRead(connection, found: true)
        case .serviceNotFound:
            notAnEightBall(&host)
        case .characteristicsDiscovered:
            guard let question = host.clientCharacteristic(connection: connection, EightBallUUID.question),
                  let answer = host.clientCharacteristic(connection: connection, EightBallUUID.answer),
                  question.properties.contains(.write), answer.properties.contains(.notify) else {
                return notAnEightBall(&host)
            }
            questionHandle = question.valueHandle
            answerHandle = answer.valueHandle
            host.clientDiscoverDescriptors(connection: connection, start: answerHandle + 1, end: serviceEnd)
        case .descriptorsDiscovered:
            let cccdType = BLEUUID(uuid16: GATTType.clientCharacteristicConfiguration)
            guard let cccd = host.clientDescriptor(connection: connection, cccdType, after: answerHandle) else {
                return notAnEightBall(&host)
            }
            cccdHandle = cccd.handle
            phase = .ready
            events.push(.ready(mtu: host.mtu(connection: connection)))
            if hasQuestion { beginQuestion(&host, now) }
        case .writeCompleted(_, let handle):
            if handle == cccdHandle, phase == .subscribing {
                // Subscribed and confirmed: now the question (the ITCB apps' order).
                phase = .writing
                askedAt = now
                _ = question.withBytes { host.clientWrite(connection: connection, attribute: questionHandle, value: $0) }
            } else if handle == questionHandle, phase == .writing {
                if hasAnswer {
                    outcome = .answered
                    unsubscribe(&host)
                } else {
                    phase = .waitingAnswer  // until the notification, or `questionDue`
                }
            } else if handle == cccdHandle, phase == .unsubscribing {
                report(now)
                phase = .ready
                if finishing { finish(host: &host) }
            }
        case .error(_, _, _, let code):
            switch phase {
            case .writing:
                outcome = code == ATTError.unlikelyError ? .rejected : .failed(code)
                unsubscribe(&host)
            case .subscribing:
                outcome = .failed(code)
                report(now)
                phase = .ready
            case .unsubscribing:
                report(now)  // the answer stands even if unsubscribing failed
                phase = .ready
            case .discovering:
                notAnEightBall(&host)
            default:
                break
            }
        case .timeout:
            outcome = .offline  // the host closes the link; linkLost reports it
        default:
            break
        }
    }

    /// Timers: the question's deadline (device offline, or not found), the
    /// scan's settling and timeout (nothing found), `finish`'s wait for the
    /// link; and an answer that arrived while it was awaited.
    public mutating func tick(host: inout Host, now: UInt64) {
        if phase == .waitingAnswer, hasAnswer {
            outcome = .answered
            unsubscribe(&host)
        }
        if hasQuestion, let due = questionDue, now >= due { return questionOverdue(&host, now) }
        if let until = settleUntil, now >= until {
            settleUntil = nil
            if phase == .scanning, hasTarget { connectToTarget(&host, now) }
        }
        guard let due = deadline, now >= due else { return }
        deadline = nil
        switch phase {
        case .scanning where hasTarget && !settings.listOnly:
            connectToTarget(&host, now)
        case .scanning:
            host.stopScanning()
            if settings.listOnly {
                events.push(.scanComplete)
            } else {
                events.push(.notFound)
            }
            hasQuestion = false
            end()
        case .disconnecting:
            // The link did not close within `closeGrace`: the driver's stop resets
            // the controller, which ends it.
            report(now)
            end()
        default:
            break
        }
    }

    /// The question's time is up, whatever it was waiting for: found nothing
    /// (not found, as a scan timeout) or anything later (device offline). The
    /// link it was using is closed: a request may still be outstanding on it,
    /// and the next question starts afresh.
    mutating func questionOverdue(_ host: inout Host, _ now: UInt64) {
        questionDue = nil
        if phase == .scanning, !hasTarget {
            host.stopScanning()
            events.push(.notFound)
            hasQuestion = false
            return end()
        }
        if outcome == .none { outcome = .offline }  // an answer already in stands
        report(now)
        settleUntil = nil
        hasTarget = false
        switch phase {
        case .disconnecting, .abandoning, .finished:
            return
        case .connecting:
            phase = .abandoning
            host.cancelConnecting()  // its .connectionFailed ends the abandoning
        default:
            if let connection {
                phase = .abandoning
                host.disconnect(connection: connection)
            } else {
                host.stopScanning()
                phase = .idle
            }
        }
    }

    /// An abandoned question's link is closed (or its connection attempt failed).
    mutating func linkAbandoned(_ host: inout Host, _ now: UInt64) {
        phase = .idle
        if finishing {
            end()
        } else if hasQuestion {
            beginScan(&host, now)
        }
    }

    /// Forgets the 8-Ball matched while settling (the platform found --peer
    /// ambiguous): nothing is connected to when the settling ends.
    public mutating func dropTarget() {
        hasTarget = false
    }

    /// The platform's verdict on the name read (`.nameRead`): the 8-Ball wanted
    /// goes on to discovery; another is left and the scan resumes.
    public mutating func nameChecked(_ wanted: Bool, host: inout Host, now: UInt64) {
        guard phase == .nameRead, let connection else { return }
        if wanted {
            phase = .discovering
            host.clientDiscoverPrimaryService(connection: connection, uuid: EightBallUUID.service)
        } else {
            phase = .rejecting
            host.disconnect(connection: connection)
        }
    }

    mutating func nameRead(_ connection: UInt16, found: Bool) {
        phase = .nameRead
        events.push(.nameRead(connection: connection, found: found))
    }
}
