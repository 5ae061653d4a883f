import BLEHost

/// The asker's steps: what it checks in a scan entry, and each move from scan to
/// connection to question to report.
extension EightBallCentral {
    func matches(_ entry: ScanEntry) -> Bool {
        guard isCandidate(entry) else { return false }
        if let address = settings.peerAddress { return entry.address.value == address }
        if !settings.peerName.isEmpty {
            return settings.peerName.withBytes { entry.summary.name.equals($0) }
        }
        return true
    }

    /// Whether an advertiser is an 8-Ball this session may pick, whoever --peer
    /// names: connectable (or only listed), the 8-Ball service, a name (a
    /// shortened one once the scan response with the full one was heard), a
    /// signal inside the window.
    public func isCandidate(_ entry: ScanEntry) -> Bool {
        guard entry.connectable || settings.listOnly,
              entry.summary.hasService(EightBallUUID.service),
              !entry.summary.name.isEmpty,
              // A shortened name: wait for the scan response with the full one.
              entry.summary.nameIsComplete || entry.heardScanResponse || !entry.connectable else { return false }
        guard settings.rssiWindow else { return true }
        return entry.rssi != 127 && entry.rssi >= settings.rssiMin && entry.rssi <= settings.rssiMax
    }

    /// Lists an 8-Ball the first time it is heard. The event goes first: an
    /// address is remembered only once its report is on its way (a full ring
    /// leaves it to be listed at its next advertisement). A full table forgets
    /// its oldest address and says so once (`.listFull`): never a silent cap.
    mutating func reportOnce(_ entry: ScanEntry) {
        for i in 0..<reportedCount where reported[i] == entry.address.value { return }
        guard events.push(.found(entry)) else { return }
        listedCount += 1
        if reportedCount < reported.count {
            reported[reportedCount] = entry.address.value
            reportedCount += 1
            return
        }
        if listedCount == reported.count + 1 { _ = events.push(.listFull(reported.count)) }
        reported[reportedOldest] = entry.address.value
        reportedOldest = (reportedOldest + 1) % reported.count
    }

    /// `settle`: listen `settings.settleTime` before connecting (not after a
    /// name read turned an 8-Ball down: what is around was heard already).
    mutating func beginScan(_ host: inout Host, _ now: UInt64, settle: Bool = true) {
        phase = .scanning
        table.removeAll()
        hasTarget = false
        settleUntil = nil
        deadline = nil
        if host.isReady { scanStarted(now, settle: settle) }
        host.startScanning()
    }

    /// The scan's clocks start when the controller can scan.
    mutating func scanStarted(_ now: UInt64, settle: Bool = true) {
        deadline = now + settings.scanTimeout
        settleUntil = settle && settings.settleTime > 0 && !settings.listOnly ? now + settings.settleTime : nil
    }

    /// The 8-Ball matched (the latest report of it): said, and connected to.
    mutating func connectToTarget(_ host: inout Host, _ now: UInt64) {
        hasTarget = false
        settleUntil = nil
        events.push(.found(target))
        connectAttempts += 1
        if host.connect(to: target.address, timeout: settings.connectTimeout) {
            phase = .connecting
            deadline = nil
        }
    }

    mutating func beginQuestion(_ host: inout Host, _ now: UInt64) {
        guard let connection else { return }
        hasAnswer = false
        outcome = .none
        phase = .subscribing
        var enable = FixedBytes<2>()
        enable.appendUInt16(0x0001)
        if !enable.withBytes({ host.clientWrite(connection: connection, attribute: cccdHandle, value: $0) }) {
            outcome = .failed(ATTError.unlikelyError)
            report(now)
            phase = .ready
        }
    }

    mutating func unsubscribe(_ host: inout Host) {
        guard let connection else { return }
        phase = .unsubscribing
        deadline = nil
        var disable = FixedBytes<2>()
        disable.appendUInt16(0x0000)
        if !disable.withBytes({ host.clientWrite(connection: connection, attribute: cccdHandle, value: $0) }) {
            report(askedAt)
            phase = .ready
        }
    }

    /// Reports the current question's outcome and frees the slot for the next one.
    mutating func report(_ now: UInt64) {
        guard hasQuestion else { return }
        hasQuestion = false
        questionDue = nil
        switch outcome {
        case .answered:
            let index = answer.withBytes { Answers.index(of: $0) }
            events.push(.answered(answer: index, value: answer, latency: now >= askedAt ? now - askedAt : 0))
        case .rejected: events.push(.rejected)
        case .failed(let code): events.push(.failed(code: code))
        case .offline, .none: events.push(.offline)
        }
        outcome = .none
    }

    mutating func linkLost(_ host: inout Host, _ now: UInt64) {
        deadline = nil
        if phase == .rejecting, !finishing {
            // Not the 8-Ball wanted (its full name said so): look on.
            connectAttempts = 0
            return beginScan(&host, now, settle: false)
        }
        if phase == .abandoning { return linkAbandoned(&host, now) }
        if finishing || phase == .disconnecting {
            report(now)
            return end()
        }
        var inQuestion = false
        switch phase {
        case .subscribing, .writing, .waitingAnswer, .unsubscribing: inQuestion = hasQuestion
        default: break
        }
        if inQuestion, outcome == .answered || outcome == .rejected {
            // The outcome was known before the link dropped: it stands.
            report(now)
            phase = .idle
            return
        }
        if hasQuestion, !retried, outcome != .offline {
            retried = true
            events.push(.retrying)
            connectAttempts = 0
            beginScan(&host, now)
            return
        }
        if hasQuestion {
            outcome = .offline
            report(now)
        }
        phase = .idle
    }

    mutating func notAnEightBall(_ host: inout Host) {
        events.push(.notAnEightBall)
        hasQuestion = false
        questionDue = nil
        finishing = true
        if let connection {
            phase = .disconnecting
            deadline = host.now + settings.closeGrace
            host.disconnect(connection: connection)
        } else {
            end()
        }
    }

    mutating func fail(_ outcome: Outcome) {
        self.outcome = outcome
        if hasQuestion {
            report(0)
        } else {
            events.push(.offline)
        }
        end()
    }

    mutating func end() {
        guard phase != .finished else { return }
        phase = .finished
        deadline = nil
        events.push(.finished)
    }
}

// MARK: - GATTDelegate

/// The asker serves nothing (the server's defaults refuse every dynamic
/// access); as a client it takes the answer notification.
extension EightBallCentral: GATTServerDelegate, GATTClientDelegate {
    /// The answer, while a question waits for it; `tick` finishes the question.
    public mutating func clientNotification(connection: UInt16, attribute: UInt16, value: UnsafeRawBufferPointer) {
        guard connection == self.connection, attribute == answerHandle,
              phase == .writing || phase == .waitingAnswer, !hasAnswer else { return }
        answer.removeAll()
        answer.append(UnsafeRawBufferPointer(rebasing: value[0..<min(value.count, answer.freeSpace)]))
        hasAnswer = true
    }

}

/// The earlier of two optional instants (nil: none).
func earliest(_ a: UInt64?, _ b: UInt64?) -> UInt64? {
    guard let a else { return b }
    guard let b else { return a }
    return min(a, b)
}
