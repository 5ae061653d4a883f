/// Why a peer's request was dropped unanswered.
public enum RequestDrop: Equatable {
    /// An ATT request while the answer to the previous one still waited for
    /// room (one request at a time, Core Vol 3 Part F §3.3.2).
    case attPipelined
    /// An L2CAP signalling request while the answer to the previous one still waited.
    case signalingPipelined
}
