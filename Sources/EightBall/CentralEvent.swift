import BLEHost

/// What the session reports to the platform.
public enum CentralEvent {
    /// An advertiser passed the filter (scan table entry).
    case found(ScanEntry)
    case connected(address: BDAddress)
    /// The target's advertised name is shortened: its GAP Device Name (0x2A00)
    /// was read (`found`: the value is in the client link's `readValue`) or
    /// could not be (`found` false). The session waits for `nameChecked`.
    case nameRead(connection: UInt16, found: Bool)
    /// Service, characteristics and Answer CCCD discovered: questions can be asked.
    case ready(mtu: UInt16)
    /// The answer to the current question: its index when it is a known slug or
    /// phrase, and the raw value.
    case answered(answer: Int?, value: Capacity.AnswerValue, latency: UInt64)
    /// ATT error 0x0E: "please rephrase as a question".
    case rejected
    /// Another ATT error on the question write.
    case failed(code: UInt8)
    /// No answer in time: "device offline".
    case offline
    /// No 8-Ball passed the filter before the scan timeout.
    case notFound
    /// The peer has no 8-Ball service or lacks its characteristics.
    case notAnEightBall
    /// The link dropped mid-question: asking again on a fresh connection.
    case retrying
    /// Scan-only mode has listed as many 8-Balls as it remembers (the count):
    /// from now on the oldest is forgotten, and listed again if heard again.
    case listFull(Int)
    /// Scan-only mode finished.
    case scanComplete
    /// The session ended (after `finish` or a fatal error).
    case finished
}
