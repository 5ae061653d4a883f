/// Why output was dropped: the fixed queue it goes through was full.
public enum OutputDrop: Equatable {
    /// An HCI command did not fit the command ring.
    case commandQueueFull
    /// An L2CAP PDU (ATT response, notification, signaling, SMP) did not fit the transmit slots.
    case transmitQueueFull
    /// A host event (or advertising report) did not fit the event ring: the application never sees it.
    /// Reported once per overflow, in the ring's last slot, kept for this notice.
    case eventQueueFull
}
