/// The answers a link is owed that found no room in the transmit queue when
/// their requests were served (see `Host`'s flow control). Reset in place.
struct OwedAnswers: ~Copyable {
    /// An ATT response or Error Response, built when its request was served
    /// (a store, read in place: paying it copies its bytes, not the whole
    /// ATT_MTU-sized buffer).
    var att = Capacity.ATTPDUStore()
    /// An LE signalling response.
    var signaling = Capacity.SignalingAnswerStore()
    /// A Pairing Failed (SMP has nothing else to say).
    var smp = false
    /// A Handle Value Confirmation for the peer's indication (our client).
    var confirmation = false

    var isEmpty: Bool { att.isEmpty && signaling.isEmpty && !smp && !confirmation }

    mutating func removeAll() {
        att.removeAll()
        signaling.removeAll()
        smp = false
        confirmation = false
    }
}
