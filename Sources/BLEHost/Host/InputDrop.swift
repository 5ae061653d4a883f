/// Why input was dropped (counted and logged, never fatal).
public enum InputDrop: Equatable {
    /// An HCI event shorter than its parameters say, or than its code needs.
    case hciEvent
    /// ACL for a connection handle we do not have (and not one just being
    /// made); also an LE event about a link for such a handle (`.unknownConnection`).
    case aclUnknownHandle
    /// An ACL packet or L2CAP PDU whose lengths disagree, or a reserved boundary flag.
    case aclMalformed
    /// An L2CAP fixed channel we do not serve.
    case l2capUnknownChannel
    /// An ATT PDU from the peer's server too short for its opcode.
    case attMalformed
}
