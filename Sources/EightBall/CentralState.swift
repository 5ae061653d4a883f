import BLEHost

/// One central's 8-Ball state, reset in place: each central has its own
/// question, answer and subscription (docs/COMMAND-LINE.md, "The peripheral").
/// Pinned, so `claim` re-initialises it where it lies.
@usableFromInline struct CentralState: ~Copyable {
    let pin = InPlacePin()
    @usableFromInline var handle: UInt16 = 0
    @usableFromInline var inUse = false
    @usableFromInline var question = Capacity.AttributeValue()
    /// Index of the last answer, -1 before the first question.
    var answer = -1
    /// An accepted question whose answer has not been notified yet.
    var pending = false
    /// The wait for a subscription was logged once.
    var reportedWaiting = false

    mutating func claim(_ connection: UInt16) {
        self = CentralState()
        handle = connection
        inUse = true
    }
}
