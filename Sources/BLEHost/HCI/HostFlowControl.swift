/// Flow control from a peer's request to the controller's ACL credits
/// (docs/ARCHITECTURE.md, "Flow control"). Nothing a legal peer is owed is
/// dropped:
///
/// - Each link may hold at most its fair share of the transmit queue
///   (capacity / links connected), so a link under its share always finds a
///   free slot, whatever the others do.
/// - A request's answer is built in its transmit slot when the link has room;
///   otherwise in the link's `OwedAnswers`, which the queue takes first as
///   room appears (`nextOutgoing`). A legal peer has one ATT request (Core
///   Vol 3 Part F §3.3.2), one signalling request and one SMP exchange
///   outstanding, so one owed answer of each kind is all it can need.
/// - A request beyond that (a peer that pipelines: a protocol violation) is
///   dropped unanswered, counted, and reported at warning at most once a
///   minute per link: the peer is slowed, never the others.
/// - Notifications wait (`notify` says false) until the link has room.
extension Host {
    /// The transmit slots one link may hold now.
    func transmitShare() -> Int {
        max(1, ACLTransmitQueue.capacity / max(1, countConnections()))
    }

    /// A PDU of link `index` fits now: a free slot within the link's share.
    func hasRoom(_ index: Int) -> Bool {
        // Fewer PDUs queued than the smallest share a link can have (all links
        // connected): room, without counting (the usual case, a question at a time).
        if aclQueue.count < ACLTransmitQueue.capacity / Host.connectionCapacity { return true }
        return aclQueue.count < ACLTransmitQueue.capacity
            && aclQueue.count(handle: connections[index].handle) < transmitShare()
    }

    /// Something new may go out on link `index`: room, and nothing owed before it.
    func canSend(_ index: Int) -> Bool {
        owed[index].isEmpty && hasRoom(index)
    }

    /// Whether a link can take a notification now (an application's poll asks
    /// before it builds one).
    public func canSend(connection: UInt16) -> Bool {
        guard let index = connectionIndex(connection) else { return false }
        return canSend(index)
    }

    /// Queues what every owing link is owed, as far as room allows; links take
    /// turns, so one cannot starve the others.
    mutating func payOwedAnswers() {
        var owing = false
        let links = Host.connectionCapacity
        for step in 0..<links {
            let index = (owedCursor + step) % links
            guard connections[index].inUse, !owed[index].isEmpty else { continue }
            payOwed(index)
            owing = owing || !owed[index].isEmpty
        }
        owedCursor = (owedCursor + 1) % links
        mayOwe = owing
    }

    /// Queues link `index`'s owed answers while it has room, in a fixed order
    /// (they travel on different channels, so their order does not matter).
    mutating func payOwed(_ index: Int) {
        let handle = connections[index].handle
        if !owed[index].signaling.isEmpty, hasRoom(index) {
            owed[index].signaling.withBytes {
                _ = aclQueue.enqueue(handle: handle, channel: L2CAPChannel.leSignaling, payload: $0)
            }
            owed[index].signaling.removeAll()
        }
        if owed[index].smp, hasRoom(index) {
            owed[index].smp = false
            withUnsafeBytes(of: (SMP.pairingFailed, SMP.reasonPairingNotSupported)) {
                _ = aclQueue.enqueue(handle: handle, channel: L2CAPChannel.smp, payload: $0)
            }
        }
        if owed[index].confirmation, hasRoom(index) {
            owed[index].confirmation = false
            withUnsafeBytes(of: ATTOpcode.handleValueConfirmation) {
                _ = aclQueue.enqueue(handle: handle, channel: L2CAPChannel.att, payload: $0)
            }
        }
        if !owed[index].att.isEmpty, hasRoom(index),
           let slot = aclQueue.reserve(handle: handle, channel: L2CAPChannel.att) {
            owed[index].att.withBytes { _ = aclQueue.pdus[slot].append($0) }
            owed[index].att.removeAll()
            aclQueue.commit()
        }
    }

    /// Notes that something is owed: `nextOutgoing` will pay it.
    mutating func owe() { mayOwe = true }

    /// A peer's request dropped unanswered (it had one waiting already).
    mutating func requestDropped(_ index: Int, _ reason: RequestDrop) {
        droppedOutput += 1
        connections[index].lastDrop = reason
        guard let unreported = connections[index].dropLine.note(now: now) else { return }
        push(.requestsDropped(connection: connections[index].handle, reason: reason, unreported: unreported))
    }

    /// At a disconnection: the lines a link's rate limits still hold back.
    mutating func reportHeldLines(_ index: Int) {
        let handle = connections[index].handle
        if let smp = connections[index].smpLine.remainder {
            push(.pairingRefused(connection: handle, unreported: smp))
        }
        if let drops = connections[index].dropLine.remainder {
            push(.requestsDropped(connection: handle, reason: connections[index].lastDrop, unreported: drops))
        }
    }
}
